"""Pure models of the text utilities benchmark scripts pipe known values through.

``paste``, simple ``sed`` scripts and ``awk`` field printing, on input that is statically
known. Each returns ``(stdout, status)``, or None for an option or program form it does not
model (the caller then treats the command as unknown: never a guess). Which forms the real
scripts use, and why the others are not modelled: ``docs/shell-census.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# the shell's modules read bash's integer test here; it is the project's one (bot/digits.py)
from bot.digits import is_integer as is_integer

# reads an operand (None or "-": standard input); None when its text is not known
Read = Callable[[str | None], str | None]

_POSIX_CLASSES = {
    "[:space:]": r"\s",
    "[:blank:]": r" \t",
    "[:digit:]": "0-9",
    "[:alpha:]": "A-Za-z",
    "[:alnum:]": "A-Za-z0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:punct:]": r"!-/:-@\[-`{-~",
    "[:xdigit:]": "0-9A-Fa-f",
}


def text_lines(text: str) -> list[str]:
    """The lines of a command's input or output, without their newlines."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def posix_regex(pattern: str, *, basic: bool) -> re.Pattern[str] | None:
    """A POSIX BRE/ERE as a Python regex (None when it uses what Python reads differently)."""
    out: list[str] = []
    i = 0
    in_bracket = False
    while i < len(pattern):
        ch = pattern[i]
        if in_bracket:
            if pattern.startswith("[:", i):
                end = pattern.find(":]", i)
                key = pattern[i : end + 2] if end != -1 else ""
                if key not in _POSIX_CLASSES:
                    return None
                out.append(_POSIX_CLASSES[key])
                i = end + 2
                continue
            if ch == "]" and not (out and out[-1] in ("[", "[^")):
                in_bracket = False
                out.append("]")
            elif ch in "\\[":
                out.append("\\" + ch)
            else:
                out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_bracket = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
            else:
                out.append("[")
                i += 1
            if i < len(pattern) and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if basic and nxt in "(){}|+?":
                out.append(nxt)
            elif nxt.isdigit() or nxt in ".*[]^$\\/&(){}|+?-":
                out.append("\\" + nxt)
            else:
                return None  # \w, \s, \< … differ between tools
            i += 2
            continue
        if basic and ch in "(){}|+?":
            out.append("\\" + ch)
        else:
            out.append(ch)
        i += 1
    if in_bracket:
        return None
    try:
        return re.compile("".join(out))
    except re.error:
        return None


# --- paste ------------------------------------------------------------------------------------


def _delimiters(spec: str) -> list[str] | None:
    out: list[str] = []
    i = 0
    while i < len(spec):
        if spec[i] == "\\" and i + 1 < len(spec):
            escaped = {"n": "\n", "t": "\t", "\\": "\\", "0": ""}.get(spec[i + 1])
            if escaped is None:
                return None
            out.append(escaped)
            i += 2
        else:
            out.append(spec[i])
            i += 1
    return out or None


def _read_all(read: Read, operands: Sequence[str]) -> list[str] | None:
    texts = [read(None if op == "-" else op) for op in operands] if operands else [read(None)]
    return None if any(t is None for t in texts) else [t or "" for t in texts]


def paste(args: Sequence[str], read: Read) -> tuple[str, int] | None:
    """``paste [-s] [-d LIST] FILE…`` (``-``: standard input)."""
    serial = False
    delimiters = ["\t"]
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        flag = rest.pop(0)
        if flag == "--":
            break
        letters = flag[1:]
        while letters:
            letter, letters = letters[0], letters[1:]
            if letter == "s":
                serial = True
            elif letter == "d":
                value = letters if letters else (rest.pop(0) if rest else None)
                letters = ""
                if value is None:
                    return None
                found = _delimiters(value)
                if found is None:
                    return None
                delimiters = found
            else:
                return None
    if not rest:
        return None
    inputs = _read_all(read, rest)
    if inputs is None:
        return None
    columns = [text_lines(text) for text in inputs]

    def joined(parts: list[str]) -> str:
        out = parts[0] if parts else ""
        for index, part in enumerate(parts[1:]):
            out += delimiters[index % len(delimiters)] + part
        return out

    if serial:
        return "".join(joined(lines) + "\n" for lines in columns), 0
    rows = max(len(lines) for lines in columns)
    out = [joined([lines[i] if i < len(lines) else "" for lines in columns]) for i in range(rows)]
    return "".join(line + "\n" for line in out), 0


# --- sed --------------------------------------------------------------------------------------

_SED_ADDRESS = re.compile(r"(\$|\d+)?")


def _sed_replacement(text: str, match: re.Match[str]) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt.isdigit():
                group = match.group(int(nxt)) if int(nxt) <= (match.re.groups or 0) else None
                if group is None and int(nxt) > (match.re.groups or 0):
                    return None
                out.append(group or "")
            elif nxt == "n":
                out.append("\n")
            elif nxt == "t":
                out.append("\t")
            else:
                out.append(nxt)
            i += 2
            continue
        out.append(match.group(0) if ch == "&" else ch)
        i += 1
    return "".join(out)


def _split_sed(script: str, delimiter: str, start: int) -> tuple[list[str], int] | None:
    """The two fields of ``s/RE/REPL/`` from ``start`` (after the ``s`` and the delimiter)."""
    fields: list[str] = []
    current: list[str] = []
    i = start
    while i < len(script) and len(fields) < 2:
        ch = script[i]
        if ch == "\\" and i + 1 < len(script):
            nxt = script[i + 1]
            current.append(nxt if nxt == delimiter else ch + nxt)
            i += 2
            continue
        if ch == delimiter:
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    return (fields, i) if len(fields) == 2 else None


_SedCommand = tuple[str | None, str, object]


def _parse_sed(script: str, extended: bool) -> list[_SedCommand] | None:
    commands: list[_SedCommand] = []
    i = 0
    while i < len(script):
        if script[i] in " \t\n;":
            i += 1
            continue
        match = _SED_ADDRESS.match(script, i)
        address = match.group(1) if match else None
        i = match.end() if match else i
        if i >= len(script):
            return None
        op = script[i]
        if op in "dpq":
            commands.append((address, op, None))
            i += 1
            continue
        if op != "s" or i + 1 >= len(script):
            return None
        delimiter = script[i + 1]
        split = _split_sed(script, delimiter, i + 2)
        if split is None:
            return None
        (pattern, replacement), i = split
        flags = ""
        while i < len(script) and script[i] in "gpI0123456789":
            flags += script[i]
            i += 1
        if set(flags) - set("gp"):
            return None
        regex = posix_regex(pattern, basic=not extended)
        if regex is None:
            return None
        commands.append((address, "s", (regex, replacement, "g" in flags, "p" in flags)))
    return commands


def _substitute(
    regex: re.Pattern[str], replacement: str, line: str, every: bool
) -> str | bool | None:
    """``s///`` on one line: the new line, False when nothing matched, None when the
    replacement refers to a group the expression does not have."""
    pieces: list[str] = []
    pos = 0
    for match in regex.finditer(line):
        text = _sed_replacement(replacement, match)
        if text is None:
            return None
        pieces.append(line[pos : match.start()] + text)
        pos = match.end()
        if not every:
            break
    if not pieces:
        return False
    return "".join(pieces) + line[pos:]


def sed(args: Sequence[str], read: Read) -> tuple[str, int] | None:
    """``sed [-n] [-E] [-e] SCRIPT [FILE…]``: ``s/RE/REPL/[gp]``, ``d``, ``p``, ``q`` with
    an optional line-number or ``$`` address (no in-place editing: that is a side effect)."""
    quiet = extended = False
    scripts: list[str] = []
    rest = list(args)
    operands: list[str] = []
    while rest:
        arg = rest.pop(0)
        if arg in ("-n", "--quiet", "--silent"):
            quiet = True
        elif arg in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif arg == "-e" and rest:
            scripts.append(rest.pop(0))
        elif arg in ("-nE", "-En", "-nr", "-rn"):
            quiet = extended = True
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            operands.append(arg)
    if not scripts:
        if not operands:
            return None
        scripts.append(operands.pop(0))
    commands = _parse_sed("\n".join(scripts), extended)
    if commands is None:
        return None
    inputs = _read_all(read, operands)
    if inputs is None:
        return None
    lines = [line for text in inputs for line in text_lines(text)]
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        deleted = stop = False
        for address, op, data in commands:
            if address == "$" and not last:
                continue
            if address not in (None, "$") and int(address) != number:
                continue
            if op == "d":
                deleted = True
                break
            if op == "p":
                out.append(line)
            elif op == "q":
                stop = True
                break
            else:
                assert isinstance(data, tuple)
                regex, replacement, every, show = data
                substituted = _substitute(regex, replacement, line, every)
                if substituted is None:
                    return None
                if substituted is not False:
                    line = str(substituted)
                    if show:
                        out.append(line)
        if not deleted and not quiet:
            out.append(line)
        if stop:
            break
    return "".join(line + "\n" for line in out), 0


# --- awk --------------------------------------------------------------------------------------

_AWK_PROGRAM = re.compile(
    r"\s*(?:/(?P<re>(?:[^/\\]|\\.)*)/\s*)?\{\s*print\s+(?P<fields>\$(?:\d+|NF)(?:\s*,\s*\$(?:\d+|NF))*)"
    r"\s*(?P<exit>;\s*exit\s*)?;?\s*\}\s*"
)


def awk(args: Sequence[str], read: Read) -> tuple[str, int] | None:
    """``awk [-F SEP] '[/RE/] {print $N[, $M…][; exit]}' [FILE…]``: field printing."""
    separator: str | None = None
    rest = list(args)
    if rest[:1] == ["-F"] and len(rest) > 1:
        separator = rest[1]
        rest = rest[2:]
    elif rest and rest[0].startswith("-F") and len(rest[0]) > 2:
        separator = rest[0][2:]
        rest = rest[1:]
    if not rest or rest[0].startswith("-"):
        return None
    program = _AWK_PROGRAM.fullmatch(rest[0])
    operands = rest[1:]
    if program is None or any(op.startswith("-") or "=" in op for op in operands):
        return None
    if separator is not None and (len(separator) != 1 or separator in "\\^$.[]|()*+?{}"):
        return None  # a regular-expression separator: not modelled
    pattern = None
    if program.group("re") is not None:
        pattern = posix_regex(program.group("re"), basic=False)
        if pattern is None:
            return None
    fields = [f.strip()[1:] for f in program.group("fields").split(",")]
    inputs = _read_all(read, operands)
    if inputs is None:
        return None
    out: list[str] = []
    for text in inputs:
        for line in text_lines(text):
            if pattern is not None and not pattern.search(line):
                continue
            parts = line.split() if separator is None else line.split(separator)
            values = []
            for name in fields:
                index = len(parts) if name == "NF" else int(name)
                if index == 0:
                    values.append(line)
                else:
                    values.append(parts[index - 1] if 0 < index <= len(parts) else "")
            out.append(" ".join(values))
            if program.group("exit"):
                return "".join(v + "\n" for v in out), 0
    return "".join(v + "\n" for v in out), 0


__all__ = ["awk", "paste", "posix_regex", "sed"]
