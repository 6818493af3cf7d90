"""``[ … ]``/``test`` (POSIX argument rules) and ``[[ … ]]`` (bash grammar) evaluation.

Results are three-valued: True, False, or None when an operand is not statically known. The
evaluator treats None as an undecidable condition and explores both branches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from tree_sitter import Node

from bot.shell import patterns
from bot.shell.fields import Seg, _Break
from bot.shell.parse import ParsedFile
from bot.shell.protocols import Interp
from bot.shell.result import SourceSpan
from bot.shell.text import Text

Tri = bool | None | Literal[2]

UNARY = frozenset(
    [
        "-a",
        "-b",
        "-c",
        "-d",
        "-e",
        "-f",
        "-g",
        "-h",
        "-k",
        "-p",
        "-r",
        "-s",
        "-t",
        "-u",
        "-w",
        "-x",
        "-G",
        "-L",
        "-N",
        "-O",
        "-S",
        "-z",
        "-n",
        "-v",
        "-o",
        "-R",
    ]
)
BINARY = frozenset(
    ["=", "==", "!=", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef", "=~"]
)
_INT = re.compile(r"\s*[-+]?\d+\s*")
_STRUCTURE = frozenset(
    (
        "binary_expression",
        "unary_expression",
        "parenthesized_expression",
        "negated_expression",
        "ternary_expression",
        "postfix_expression",
    )
)


@dataclass
class Tok:
    op: str | None  # operator text, or None for an operand word
    node: Node | None = None


def _flatten(node: Node, out: list[Tok]) -> None:
    for child in node.children:
        kind = child.type
        if kind in ("[", "]", "[[", "]]"):
            continue
        if kind in _STRUCTURE:
            _flatten(child, out)
        elif kind == "test_operator":
            out.append(Tok(child.text.decode("utf-8", "replace") if child.text else "", None))
        elif not child.is_named:
            out.append(Tok(kind, None))
        elif kind != "comment":
            out.append(Tok(None, child))


def _and(a: Tri, b_fn: object) -> Tri:
    assert callable(b_fn)
    if a is False or a == 2:
        return False
    b = b_fn()
    if b is False or b == 2:
        return False
    return None if a is None or b is None else True


def _or(a: Tri, b_fn: object) -> Tri:
    assert callable(b_fn)
    if a is True:
        return True
    b = b_fn()
    if b is True:
        return True
    return None if a is None or b is None else False


def _not(a: Tri) -> Tri:
    return None if a is None else (a if a == 2 else not a)


def _compare_ints(a: int, op: str, b: int) -> bool:
    table = {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b}
    return table.get(op, a >= b)


def unary(ev: Interp, op: str, value: Text, span: SourceSpan) -> Tri:
    if op == "-v":
        if not value.known:
            return None
        name, _, index = value.s.partition("[")
        view = ev.param(name, index[:-1] if index else None, span)
        return view.is_set
    if not value.known:
        return None
    if op == "-z":
        return value.s == ""
    if op == "-n":
        return value.s != ""
    if op == "-o":
        return value.s == "errexit" and ev.st.errexit
    if op == "-t":
        return False
    if op in ("-d", "-f", "-e", "-s", "-r", "-a"):
        return ev.files.file_test("-e" if op == "-a" else op, value, span)
    return None


def binary(ev: Interp, left: Text, op: str, right: Text, span: SourceSpan, *, double: bool) -> Tri:
    if op in ("-nt", "-ot", "-ef"):
        return None
    if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        if double:
            a, b = ev.arithmetic(left, span), ev.arithmetic(right, span)
            if not a.known or not b.known:
                return None
            return _compare_ints(int(a.s), op, int(b.s))
        if not left.known or not right.known:
            return None
        if not _INT.fullmatch(left.s) or not _INT.fullmatch(right.s):
            return 2  # "integer expression expected"
        return _compare_ints(int(left.s), op, int(right.s))
    if not left.known or not right.known:
        return None
    if op in ("=", "=="):
        return left.s == right.s
    if op == "!=":
        return left.s != right.s
    if op == "<":
        return left.s < right.s
    if op == ">":
        return left.s > right.s
    return None


def evaluate_test(ev: Interp, node: Node, pf: ParsedFile) -> Tri:
    tokens: list[Tok] = []
    _flatten(node, tokens)
    span = SourceSpan(pf.display, pf.node_line(node))
    if node.children and node.children[0].type == "[[":
        return _Double(ev, pf, tokens, span).run()
    args: list[Text] = []
    for tok in tokens:
        if tok.op is not None:
            args.append(Text.lit(tok.op))
        elif tok.node is not None:
            args.extend(f.text for f in ev.expander.fields(pf, tok.node))
    return posix_test(ev, args, span)


def posix_test(ev: Interp, args: list[Text], span: SourceSpan) -> Tri:
    """``test``/``[`` with the argument-count rules of POSIX."""
    words = [a.s for a in args]
    n = len(args)
    if n == 0:
        return False
    if n == 1:
        return None if not args[0].known else args[0].s != ""
    if n == 2:
        if words[0] == "!":
            return _not(posix_test(ev, args[1:], span))
        if words[0] in UNARY:
            return unary(ev, words[0], args[1], span)
        return 2
    if n == 3:
        if words[1] in BINARY and words[1] != "=~":
            return binary(ev, args[0], words[1], args[2], span, double=False)
        if words[1] in ("-a", "-o"):
            a = posix_test(ev, args[:1], span)
            b = posix_test(ev, args[2:], span)
            return _and(a, lambda: b) if words[1] == "-a" else _or(a, lambda: b)
        if words[0] == "!":
            return _not(posix_test(ev, args[1:], span))
        if words[0] == "(" and words[2] == ")":
            return posix_test(ev, args[1:2], span)
        return 2
    if n == 4:
        if words[0] == "!":
            return _not(posix_test(ev, args[1:], span))
        if words[0] == "(" and words[3] == ")":
            return posix_test(ev, args[1:3], span)
    return _PosixParser(ev, args, span).run()


class _PosixParser:
    def __init__(self, ev: Interp, args: list[Text], span: SourceSpan) -> None:
        self.ev, self.args, self.span, self.pos = ev, args, span, 0

    def peek(self) -> str | None:
        return self.args[self.pos].s if self.pos < len(self.args) else None

    def run(self) -> Tri:
        result = self.expr()
        return 2 if self.pos != len(self.args) else result

    def expr(self) -> Tri:
        left = self.term()
        while self.peek() == "-o":
            self.pos += 1
            right = self.term()
            left = _or(left, lambda r=right: r)
        return left

    def term(self) -> Tri:
        left = self.factor()
        while self.peek() == "-a":
            self.pos += 1
            right = self.factor()
            left = _and(left, lambda r=right: r)
        return left

    def factor(self) -> Tri:
        word = self.peek()
        if word == "!":
            self.pos += 1
            return _not(self.factor())
        if word == "(":
            self.pos += 1
            inner = self.expr()
            if self.peek() == ")":
                self.pos += 1
            return inner
        if word in UNARY and self.pos + 1 < len(self.args):
            self.pos += 2
            return unary(self.ev, word, self.args[self.pos - 1], self.span)
        if self.pos + 2 < len(self.args) + 0 and self.args[self.pos + 1].s in BINARY:
            left, op, right = self.args[self.pos : self.pos + 3]
            self.pos += 3
            return binary(self.ev, left, op.s, right, self.span, double=False)
        if self.pos < len(self.args):
            self.pos += 1
            value = self.args[self.pos - 1]
            return None if not value.known else value.s != ""
        return 2


class _Double:
    """``[[ … ]]``: no word splitting, patterns on the right of ==/!=, regexes for =~."""

    def __init__(self, ev: Interp, pf: ParsedFile, tokens: list[Tok], span: SourceSpan) -> None:
        self.ev, self.pf, self.tokens, self.span, self.pos = ev, pf, tokens, span, 0

    def peek(self) -> Tok | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def run(self) -> Tri:
        if not self.tokens:
            return 2
        return self.expr()

    def expr(self) -> Tri:
        left = self.term()
        while (tok := self.peek()) is not None and tok.op == "||":
            self.pos += 1
            left = _or(left, self.term)
        return left

    def term(self) -> Tri:
        left = self.factor()
        while (tok := self.peek()) is not None and tok.op == "&&":
            self.pos += 1
            left = _and(left, self.factor)
        return left

    def factor(self) -> Tri:
        tok = self.peek()
        if tok is None:
            return 2
        if tok.op == "!":
            self.pos += 1
            return _not(self.factor())
        if tok.op == "(":
            self.pos += 1
            inner = self.expr()
            if (close := self.peek()) is not None and close.op == ")":
                self.pos += 1
            return inner
        return self.primary()

    def value(self, tok: Tok) -> Text:
        if tok.node is None:
            return Text.lit(tok.op or "")
        return self.ev.expander.string(self.pf, tok.node)

    def primary(self) -> Tri:
        tok = self.tokens[self.pos]
        nxt = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
        if tok.op in UNARY and nxt is not None and nxt.node is not None:
            self.pos += 2
            return unary(self.ev, tok.op or "", self.value(nxt), self.span)
        self.pos += 1
        if nxt is not None and nxt.op in BINARY and self.pos + 1 < len(self.tokens):
            op = nxt.op or ""
            right_tok = self.tokens[self.pos + 1]
            self.pos += 2
            left = self.value(tok)
            if op in ("==", "=", "!="):
                if right_tok.node is None:
                    return None
                pattern, taints = self.ev.expander.pattern(self.pf, right_tok.node)
                if not left.known or taints:
                    return None
                hit = patterns.matches(pattern, left.s)
                return hit if op != "!=" else not hit
            if op == "=~":
                return self.regex(left, right_tok)
            return binary(self.ev, left, op, self.value(right_tok), self.span, double=True)
        value = self.value(tok)
        return None if not value.known else value.s != ""

    def regex(self, left: Text, tok: Tok) -> Tri:
        if tok.node is None:
            return None
        parts: list[str] = []
        known = left.known
        for piece in self.ev.expander.node_pieces(self.pf, tok.node):
            if isinstance(piece, _Break):
                parts.append(" ")
                continue
            assert isinstance(piece, Seg)
            known = known and piece.text.known
            parts.append(
                re.escape(piece.text.s) if piece.quoted else patterns.ere_to_python(piece.text.s)
            )
        if not known:
            return None
        try:
            match = re.search("".join(parts), left.s)
        except re.error:
            return 2
        groups = [match.group(0), *(g or "" for g in match.groups())] if match else []
        self.ev.set_array("BASH_REMATCH", [Text.lit(g) for g in groups], self.span, append=False)
        return match is not None
