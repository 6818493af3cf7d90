"""Commands evaluated natively because their output is a pure function of their arguments.

The whitelist: ``echo``, ``printf`` (``%s %d %i %f %.Nf %x %o %c %b %q``), ``seq``, ``dirname``,
``basename`` and text filters over known input (``cat``, ``grep``, ``head``, ``tail``, ``tr``,
``cut``, ``wc``, ``sort``, ``uniq``). Each returns (stdout, exit status); none touches the host.
"""

from __future__ import annotations

import posixpath
import re
import string
from collections.abc import Sequence

from bot.shell.escapes import decode_printf, encode, escape_at, to_text
from bot.shell.patterns import ere_to_python
from bot.shell.textutils import text_lines

# Characters bash's printf %q escapes with a backslash (lib/sh/shquote.c, bstab).
_BACKSLASH_QUOTED = frozenset(" \t\n!\"$&'()*,;<>?[\\]^`{|}")


def _ansi_c_quote(value: str) -> str:
    out = ["$'"]
    named = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
             "\v": "\\v", "\x1b": "\\E", "\\": "\\\\", "'": "\\'"}  # fmt: skip
    for ch in value:
        if ch in named:
            out.append(named[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    out.append("'")
    return "".join(out)


def shell_quote(value: str) -> str:
    """Bash ``printf %q``: ``''``, ``$'…'`` for non-printables, else backslash escapes."""
    if value == "":
        return "''"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return _ansi_c_quote(value)
    out: list[str] = []
    for index, ch in enumerate(value):
        if (
            ch in _BACKSLASH_QUOTED
            or (index == 0 and ch in "#~")
            or (ch == "~" and value[index - 1] in ":=")
        ):
            out.append("\\")
        out.append(ch)
    return "".join(out)


def echo(args: Sequence[str]) -> str:
    newline, escapes = True, False
    index = 0
    while index < len(args) and re.fullmatch(r"-[neE]+", args[index]):
        for flag in args[index][1:]:
            newline = newline and flag != "n"
            escapes = True if flag == "e" else False if flag == "E" else escapes
        index += 1
    text = " ".join(args[index:])
    if escapes:
        text, stop = decode_printf(text, for_b=True)
        if stop:
            return text
    return text + ("\n" if newline else "")


_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?([diouxXfFeEgGcsbq%])")


def _int_arg(arg: str) -> tuple[int, bool]:
    text = arg.strip()
    if text[:1] in ("'", '"'):
        return (ord(text[1]) if len(text) > 1 else 0), True
    try:
        if re.fullmatch(r"[-+]?0[xX][0-9a-fA-F]+", text):
            return int(text, 16), True
        if re.fullmatch(r"[-+]?0[0-7]+", text):
            return int(text, 8), True
        return int(text or "0"), True
    except ValueError:
        match = re.match(r"[-+]?\d+", text)
        return (int(match.group()) if match else 0), False


def _float_arg(arg: str) -> tuple[float, bool]:
    try:
        return float(arg.strip() or "0"), True
    except ValueError:
        return 0.0, False


class OutputTooLarge(Exception):
    """A command would produce more than its size limit; raised *before* allocating it."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


def printf(fmt: str, args: Sequence[str], max_size: int = 1_000_000) -> tuple[str, int]:
    """Bash ``printf FORMAT ARGS…``: the format is reused while arguments remain.

    Raises :class:`OutputTooLarge` before formatting a width or precision (``%*s`` with
    20000000000) or accumulating output beyond ``max_size``."""
    out = bytearray()
    status = 0
    queue = list(args)
    first = True
    while first or queue:
        first = False
        consumed = 0
        pos = 0
        while pos < len(fmt):
            if fmt[pos] == "\\":
                chunk, pos = escape_at(fmt, pos, "printf")
                if chunk is None:  # \c: no further output
                    return to_text(bytes(out)), status
                out += chunk  # escapes are bytes: \303\251 is é
                continue
            if fmt[pos] != "%":
                out += encode(fmt[pos])
                pos += 1
                continue
            match = _SPEC.match(fmt, pos)
            if match is None:
                out += encode(fmt[pos])
                pos += 1
                continue
            pos = match.end()
            flags, width_s, precision_s, conv = match.groups()
            if conv == "%":
                out += encode("%")
                continue

            def take() -> str:
                nonlocal consumed
                consumed += 1
                return queue.pop(0) if queue else ""

            width: int | None = None
            if width_s == "*":
                width, _ = _int_arg(take())
            elif width_s:
                width = int(width_s)
            precision: int | None = None
            if precision_s == "*":
                precision, _ = _int_arg(take())
            elif precision_s is not None:
                precision = int(precision_s or "0")
            had_arg = bool(queue)
            arg = take()
            numeric = conv in "diouxXfFeEgG"  # a string's precision only truncates
            for size in (width, precision if numeric else None):
                if size is not None and abs(size) + len(out) > max_size:
                    raise OutputTooLarge(abs(size) + len(out))
            spec = "%" + flags + (str(width) if width is not None else "")
            spec += f".{precision}" if precision is not None else ""
            if conv in "diouxX":
                value, ok = _int_arg(arg) if had_arg else (0, True)
                status = status if ok else 1
                py_conv = "d" if conv in "iu" else conv
                out += encode((spec + py_conv) % value)
            elif conv in "fFeEgG":
                number, ok = _float_arg(arg) if had_arg else (0.0, True)
                status = status if ok else 1
                out += encode((spec + conv) % number)
            elif conv == "c":
                out += encode((spec.split(".")[0] + "s") % arg[:1])
            elif conv == "b":
                text, stop = decode_printf(arg, for_b=True)
                out += encode((spec + "s") % text)
                if stop:
                    return to_text(bytes(out)), status
            elif conv == "q":
                out += encode((spec.split(".")[0] + "s") % shell_quote(arg))
            else:
                out += encode((spec + "s") % arg)
            if len(out) > max_size:
                raise OutputTooLarge(len(out))
        if consumed == 0:
            break
    return to_text(bytes(out)), status


def seq(args: Sequence[str]) -> tuple[str, int]:
    sep, fmt, equal = "\n", None, False
    rest = list(args)
    while rest and rest[0].startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", rest[0]):
        flag = rest.pop(0)
        if flag in ("-s", "--separator") and rest:
            sep = rest.pop(0)
        elif flag.startswith("-s") and len(flag) > 2:
            sep = flag[2:]
        elif flag in ("-f", "--format") and rest:
            fmt = rest.pop(0)
        elif flag == "-w":
            equal = True
        elif flag == "--":
            break
        else:
            return f"seq: invalid option '{flag}'\n", 1
    try:
        numbers = [float(x) if "." in x else int(x) for x in rest]
    except ValueError:
        return "", 1
    if not 1 <= len(numbers) <= 3:
        return "", 1
    first: float
    step: float
    last: float
    if len(numbers) == 1:
        first, step, last = 1, 1, numbers[0]
    elif len(numbers) == 2:
        first, step, last = numbers[0], 1, numbers[1]
    else:
        first, step, last = numbers[0], numbers[1], numbers[2]
    if step == 0 or abs((last - first) / step) > 1_000_000:
        return "", 1
    values: list[str] = []
    current = first
    while (step > 0 and current <= last) or (step < 0 and current >= last):
        values.append(fmt % current if fmt else str(current))
        current += step
    if equal and values:
        width = max(len(v) for v in values)
        values = [v.zfill(width) for v in values]
    return (sep.join(values) + "\n") if values else "", 0


def dirname(path: str) -> str:
    if path == "":
        return "."
    stripped = path.rstrip("/")
    if stripped == "":
        return "/"
    head = stripped.rpartition("/")[0] if "/" in stripped else "."
    head = head.rstrip("/") or ("/" if stripped.startswith("/") else head)
    return head or "."


def basename(path: str, suffix: str = "") -> str:
    stripped = path.rstrip("/")
    if stripped == "":
        return "/" if path else ""
    base = stripped.rpartition("/")[2]
    if suffix and base.endswith(suffix) and base != suffix:
        base = base[: -len(suffix)]
    return base


def normalize(path: str) -> str:
    return posixpath.normpath(path)


def _bre_to_ere(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + ch if ch in "(){}|+?" else ch)
        i += 1
    return "".join(out)


def grep(args: Sequence[str], text: str) -> tuple[str, int] | None:
    """``grep`` over known input; None for options it does not model."""
    quiet = invert = fixed = extended = whole_line = count = ignore_case = only = False
    word = False
    patterns_: list[str] = []
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "-":
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag == "-e" and rest:
            patterns_.append(rest.pop(0))
            continue
        for letter in flag[1:]:
            if letter == "q":
                quiet = True
            elif letter == "v":
                invert = True
            elif letter == "F":
                fixed = True
            elif letter == "E":
                extended = True
            elif letter == "x":
                whole_line = True
            elif letter == "c":
                count = True
            elif letter == "i":
                ignore_case = True
            elif letter == "o":
                only = True
            elif letter == "w":
                word = True
            elif letter == "s":
                pass
            else:
                return None
    if not patterns_:
        if not rest:
            return None
        patterns_.append(rest.pop(0))
    if rest:
        return None  # file operands: the caller reads files
    regexes = []
    for pattern in patterns_:
        for alternative in pattern.split("\n"):
            body = (
                re.escape(alternative)
                if fixed
                else (
                    ere_to_python(alternative)
                    if extended
                    else ere_to_python(_bre_to_ere(alternative))
                )
            )
            if whole_line:
                body = f"(?:{body})\\Z"
            elif word:
                body = f"\\b(?:{body})\\b"
            try:
                regexes.append(re.compile(body, re.IGNORECASE if ignore_case else 0))
            except re.error:
                return None
    matched: list[str] = []
    for line in text_lines(text):
        hit = None
        for regex in regexes:
            found = regex.match(line) if whole_line else regex.search(line)
            if found:
                hit = found
                break
        if (hit is not None) != invert:
            matched.append(hit.group(0) if (only and hit is not None and not invert) else line)
    status = 0 if matched else 1
    if quiet:
        return "", status
    if count:
        return f"{len(matched)}\n", status
    return "".join(line + "\n" for line in matched), status


def head_tail(name: str, args: Sequence[str], text: str) -> tuple[str, int] | None:
    count = 10
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag == "-n" and rest:
            value = rest.pop(0)
        elif flag.startswith("-n"):
            value = flag[2:]
        elif re.fullmatch(r"-\d+", flag):
            value = flag[1:]
        else:
            return None
        plus = value.startswith("+")
        try:
            count = int(value.lstrip("+"))
        except ValueError:
            return None
        if plus and name == "tail":
            return "".join(line + "\n" for line in text_lines(text)[count - 1 :]), 0
    lines = text_lines(text)
    chosen = lines[:count] if name == "head" else (lines[-count:] if count else [])
    return "".join(line + "\n" for line in chosen), 0


def _tr_set(spec: str) -> str:
    classes = {
        "[:upper:]": string.ascii_uppercase,
        "[:lower:]": string.ascii_lowercase,
        "[:digit:]": string.digits,
        "[:space:]": " \t\n\r\f\v",
        "[:blank:]": " \t",
    }
    for key, chars in classes.items():
        spec = spec.replace(key, chars)
    spec, _ = decode_printf(spec, for_b=False)
    out: list[str] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out.extend(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


def tr(args: Sequence[str], text: str) -> tuple[str, int] | None:
    rest = list(args)
    delete = squeeze = False
    while rest and rest[0].startswith("-") and len(rest[0]) > 1:
        flag = rest.pop(0)
        for letter in flag[1:]:
            if letter == "d":
                delete = True
            elif letter == "s":
                squeeze = True
            else:
                return None
    if delete and len(rest) == 1:
        drop = set(_tr_set(rest[0]))
        return "".join(ch for ch in text if ch not in drop), 0
    if len(rest) == 2 and not delete:
        source, target = _tr_set(rest[0]), _tr_set(rest[1])
        if not target:
            return None
        target = target + target[-1] * max(0, len(source) - len(target))
        table = str.maketrans(source, target[: len(source)])
        out = text.translate(table)
        if squeeze:
            out = re.sub("([" + re.escape(target) + "])\\1+", r"\1", out)
        return out, 0
    if squeeze and len(rest) == 1:
        chars = _tr_set(rest[0])
        return re.sub("([" + re.escape(chars) + "])\\1+", r"\1", text), 0
    return None


def _ranges(spec: str) -> list[tuple[int, int | None]]:
    out: list[tuple[int, int | None]] = []
    for part in spec.split(","):
        if "-" in part:
            lo, _, hi = part.partition("-")
            out.append((int(lo or "1"), int(hi) if hi else None))
        else:
            out.append((int(part), int(part)))
    return out


def cut(args: Sequence[str], text: str) -> tuple[str, int] | None:
    delimiter, fields, chars = "\t", None, None
    rest = list(args)
    try:
        while rest:
            flag = rest.pop(0)
            if flag == "-d" and rest:
                delimiter = rest.pop(0)
            elif flag.startswith("-d"):
                delimiter = flag[2:]
            elif flag == "-f" and rest:
                fields = _ranges(rest.pop(0))
            elif flag.startswith("-f"):
                fields = _ranges(flag[2:])
            elif flag == "-c" and rest:
                chars = _ranges(rest.pop(0))
            elif flag.startswith("-c"):
                chars = _ranges(flag[2:])
            else:
                return None
    except ValueError:
        return None
    out: list[str] = []
    for line in text_lines(text):
        if fields is not None:
            parts = line.split(delimiter[:1] or "\t")
            if len(parts) == 1:
                out.append(line)
                continue
            chosen = [
                p for index, p in enumerate(parts, 1)
                if any(lo <= index and (hi is None or index <= hi) for lo, hi in fields)
            ]  # fmt: skip
            out.append((delimiter[:1] or "\t").join(chosen))
        elif chars is not None:
            out.append("".join(
                ch for index, ch in enumerate(line, 1)
                if any(lo <= index and (hi is None or index <= hi) for lo, hi in chars)
            ))  # fmt: skip
        else:
            return None
    return "".join(line + "\n" for line in out), 0


def wc(args: Sequence[str], text: str) -> tuple[str, int] | None:
    if args == ["-l"]:
        return f"{text.count(chr(10))}\n", 0
    if args == ["-c"]:
        return f"{len(text.encode())}\n", 0
    if args == ["-w"]:
        return f"{len(text.split())}\n", 0
    return None


def sort_uniq(name: str, args: Sequence[str], text: str) -> tuple[str, int] | None:
    lines = text_lines(text)
    if name == "uniq":
        if args:
            return None
        out: list[str] = []
        for line in lines:
            if not out or out[-1] != line:
                out.append(line)
        return "".join(line + "\n" for line in out), 0
    flags = "".join(a[1:] for a in args if a.startswith("-"))
    if any(a for a in args if not a.startswith("-")) or set(flags) - set("unr"):
        return None

    def numeric(line: str) -> float:
        match = re.match(r"\s*(-?\d+(\.\d*)?)", line)
        return float(match.group(1)) if match else 0.0

    if "n" in flags:
        lines.sort(key=numeric, reverse="r" in flags)
    else:
        lines.sort(reverse="r" in flags)
    if "u" in flags:
        seen: list[str] = []
        for line in lines:
            if line not in seen:
                seen.append(line)
        lines = seen
    return "".join(line + "\n" for line in lines), 0
