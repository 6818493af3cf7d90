"""Bash arithmetic (``$(( ))``, ``(( ))``, ``let``, C-style ``for``): 64-bit, effects via hooks.

The expression text has already been through parameter expansion. Bare names are variables
whose values are themselves arithmetic expressions (bash semantics). A variable whose value is
not statically known makes the result unknown (``None``), never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_MASK = (1 << 64) - 1


def wrap(value: int) -> int:
    value &= _MASK
    return value - (1 << 64) if value >> 63 else value


class ArithError(ValueError):
    """Malformed arithmetic (bash would print an error and fail the command)."""


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+#[0-9A-Za-z@_]+|0[xX][0-9A-Fa-f]+|\d+)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*=|<<=|>>=|\+\+|--|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&^|]=|[-+*/%<>=!~&^|?:,()\[\]]))"
)


@dataclass(frozen=True)
class Num:
    value: int


@dataclass(frozen=True)
class Ref:
    name: str
    index: Ast | None = None


@dataclass(frozen=True)
class Unary:
    op: str
    operand: Ast


@dataclass(frozen=True)
class Binary:
    op: str
    left: Ast
    right: Ast


@dataclass(frozen=True)
class Ternary:
    condition: Ast
    yes: Ast
    no: Ast


@dataclass(frozen=True)
class Assign:
    op: str  # "=", "+=", … ; "++"/"--" with ``prefix`` for increments
    target: Ref
    value: Ast | None = None
    prefix: bool = True


@dataclass(frozen=True)
class Comma:
    first: Ast
    second: Ast


Ast = Num | Ref | Unary | Binary | Ternary | Assign | Comma


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ArithError(f'syntax error in expression (error token is "{text[pos:].strip()}")')
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def parse_number(text: str) -> int:
    text = text.strip()
    try:
        if "#" in text:
            base_text, digits = text.split("#", 1)
            base = int(base_text)
            if not 2 <= base <= 64:
                raise ArithError(f"invalid arithmetic base: {base_text}")
            value = 0
            alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_"
            for ch in digits:
                if base <= 36:
                    ch = ch.lower()
                digit = alphabet.index(ch)
                if digit >= base:
                    raise ArithError(f"value too great for base: {text}")
                value = value * base + digit
            return wrap(value)
        if text.lower().startswith("0x"):
            return wrap(int(text, 16))
        if len(text) > 1 and text.startswith("0"):
            return wrap(int(text, 8))
        return wrap(int(text))
    except (ValueError, IndexError) as err:
        raise ArithError(f"invalid number: {text}") from err


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            raise ArithError("syntax error: operand expected")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def expect(self, op: str) -> None:
        _, value = self.take()
        if value != op:
            raise ArithError(f"syntax error: expected '{op}'")

    def parse(self) -> Ast:
        if not self.tokens:
            return Num(0)
        node = self.comma()
        if self.pos != len(self.tokens):
            raise ArithError(f'syntax error in expression (error token is "{self.peek()}")')
        return node

    def comma(self) -> Ast:
        node = self.assign()
        while self.peek() == ",":
            self.take()
            node = Comma(node, self.assign())
        return node

    def assign(self) -> Ast:
        start = self.pos
        if self.pos < len(self.tokens) and self.tokens[self.pos][0] == "name":
            target = self.lvalue()
            op = self.peek()
            if op in {"=", "*=", "/=", "%=", "+=", "-=", "<<=", ">>=", "&=", "^=", "|=", "**="}:
                self.take()
                return Assign(op, target, self.assign())
            self.pos = start
        return self.ternary()

    def lvalue(self) -> Ref:
        _, name = self.take()
        if self.peek() == "[":
            self.take()
            index = self.comma()
            self.expect("]")
            return Ref(name, index)
        return Ref(name)

    def ternary(self) -> Ast:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take()
            yes = self.assign()
            self.expect(":")
            no = self.assign()
            return Ternary(cond, yes, no)
        return cond

    _LEVELS: tuple[tuple[str, ...], ...] = (
        ("||",),
        ("&&",),
        ("|",),
        ("^",),
        ("&",),
        ("==", "!="),
        ("<=", ">=", "<", ">"),
        ("<<", ">>"),
        ("+", "-"),
        ("*", "/", "%"),
    )

    def binary(self, level: int) -> Ast:
        if level == len(self._LEVELS):
            return self.power()
        node = self.binary(level + 1)
        while self.peek() in self._LEVELS[level]:
            _, op = self.take()
            node = Binary(op, node, self.binary(level + 1))
        return node

    def power(self) -> Ast:
        base = self.unary()
        if self.peek() == "**":
            self.take()
            return Binary("**", base, self.power())
        return base

    def unary(self) -> Ast:
        op = self.peek()
        if op in {"+", "-", "!", "~"}:
            self.take()
            return Unary(op, self.unary())
        if op in {"++", "--"}:
            self.take()
            if self.pos >= len(self.tokens) or self.tokens[self.pos][0] != "name":
                raise ArithError("syntax error: variable expected after ++/--")
            return Assign(op, self.lvalue(), None, prefix=True)
        return self.postfix()

    def postfix(self) -> Ast:
        kind, value = self.take()
        if kind == "num":
            return Num(parse_number(value))
        if kind == "name":
            self.pos -= 1
            target = self.lvalue()
            if self.peek() in {"++", "--"}:
                _, op = self.take()
                return Assign(op, target, None, prefix=False)
            return target
        if value == "(":
            node = self.comma()
            self.expect(")")
            return node
        raise ArithError(f'syntax error: operand expected (error token is "{value}")')


@lru_cache(maxsize=4096)
def parse(text: str) -> Ast:
    """The expression's syntax tree (immutable, so shared between evaluations)."""
    return _Parser(_tokens(text)).parse()


@dataclass
class Hooks:
    """Variable access for the evaluator: values are arithmetic text, None when unknown."""

    get: Callable[[str, int | None], str | None]
    set: Callable[[str, int | None, int | None], None]
    step: Callable[[], None]
    depth: int = 0


def evaluate(text: str, hooks: Hooks) -> int | None:
    """Value of the expression, or None when it depends on something unknown."""
    return _eval(parse(text), hooks)


def _operand(ref: Ref, hooks: Hooks) -> int | None:
    idx: int | None = None
    if ref.index is not None:
        idx = _eval(ref.index, hooks)
        if idx is None:
            return None
    raw = hooks.get(ref.name, idx)
    if raw is None:
        return None
    raw = raw.strip()
    if raw == "":
        return 0
    if re.fullmatch(r"-?[1-9]\d*|0", raw):
        return wrap(int(raw))
    if hooks.depth > 32:
        raise ArithError("expression recursion level exceeded")
    hooks.depth += 1
    try:
        return evaluate(raw, hooks)
    finally:
        hooks.depth -= 1


def _binary(op: str, a: int, b: int) -> int:
    if op in {"/", "%"} and b == 0:
        raise ArithError("division by 0")
    if op == "/":
        quotient = abs(a) // abs(b)  # C semantics: truncate toward zero
        return wrap(quotient if (a >= 0) == (b >= 0) else -quotient)
    if op == "%":
        rem = abs(a) % abs(b)
        return wrap(rem if a >= 0 else -rem)
    if op == "**":
        if b < 0:
            raise ArithError("exponent less than 0")
        if b > 4096 and abs(a) > 1:
            return wrap(pow(a, b, 1 << 64))
        return wrap(a**b)
    table: dict[str, Callable[[int, int], int]] = {
        "+": lambda x, y: x + y,
        "-": lambda x, y: x - y,
        "*": lambda x, y: x * y,
        "<<": lambda x, y: x << (y & 63),
        ">>": lambda x, y: x >> (y & 63),
        "<": lambda x, y: int(x < y),
        ">": lambda x, y: int(x > y),
        "<=": lambda x, y: int(x <= y),
        ">=": lambda x, y: int(x >= y),
        "==": lambda x, y: int(x == y),
        "!=": lambda x, y: int(x != y),
        "&": lambda x, y: x & y,
        "^": lambda x, y: x ^ y,
        "|": lambda x, y: x | y,
    }
    return wrap(table[op](a, b))


def _eval(node: Ast, hooks: Hooks) -> int | None:
    hooks.step()
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Ref):
        return _operand(node, hooks)
    if isinstance(node, Unary):
        value = _eval(node.operand, hooks)
        if value is None:
            return None
        if node.op == "-":
            return wrap(-value)
        if node.op == "!":
            return int(not value)
        return wrap(~value) if node.op == "~" else value
    if isinstance(node, Binary):
        left = _eval(node.left, hooks)
        if node.op in ("&&", "||"):
            if left is not None and (bool(left) == (node.op == "||")):
                return int(node.op == "||")  # short circuit: the right side never runs
            right = _eval(node.right, hooks)
            if left is None or right is None:
                return None
            return int(bool(right))
        right = _eval(node.right, hooks)
        if left is None or right is None:
            return None
        return _binary(node.op, left, right)
    if isinstance(node, Ternary):
        condition = _eval(node.condition, hooks)
        if condition is None:
            return None
        return _eval(node.yes if condition else node.no, hooks)
    if isinstance(node, Comma):
        _eval(node.first, hooks)
        return _eval(node.second, hooks)
    return _assign(node, hooks)


def _assign(node: Assign, hooks: Hooks) -> int | None:
    target = node.target
    idx: int | None = None
    if target.index is not None:
        idx = _eval(target.index, hooks)
        if idx is None:
            return None
    current = _operand(target, hooks) if node.op != "=" else None
    value: int | None
    if node.op in ("++", "--"):
        value = None if current is None else wrap(current + (1 if node.op == "++" else -1))
    else:
        assert node.value is not None
        given = _eval(node.value, hooks)
        if node.op == "=":
            value = given
        else:
            value = (
                None if given is None or current is None else _binary(node.op[:-1], current, given)
            )
    hooks.set(target.name, idx, value)
    if value is None or node.prefix or node.op not in ("++", "--"):
        return value
    return current  # postfix: the value before the increment
