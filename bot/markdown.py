"""Safe GitHub-flavoured Markdown from untrusted text (job names, log lines, changelog text).

Untrusted text must not inject Markdown or HTML into a PR body or comment: no raw HTML (``<``
becomes ``&lt;``), no @mentions (a zero-width space follows ``@``), no links, emphasis or
headings, no table breaks. Code goes in spans or fences longer than any backtick run it
contains, so it cannot close them. ``<!--`` and ``-->`` never appear in the output, not even in
code, because bots find their own comments by such markers in the raw body.
"""

from __future__ import annotations

import re
from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u2028\u2029]")
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~#!])")
_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+[.)])")
_BACKTICKS = re.compile(r"`+")
_SAFE_URL = re.compile(r"https://[A-Za-z0-9.-]+(?:/[A-Za-z0-9._~%!$&'*+,;=:@/?#-]*)?")
ZWSP = "\u200b"
MAX_BODY = 60_000  # GitHub rejects bodies over 65,536 characters; keep a margin

_FENCE = re.compile(r"(^|\n)(`{3,}|~{3,})[^\n]*\n.*?(\n\2[ \t]*(?=\n|$)|$)", re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9][A-Za-z0-9-]*)")
_KEYWORD = re.compile(
    r"\b((?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+(?:[\w.-]+/[\w.-]+)?)#(?=\d)",
    re.IGNORECASE,
)


def _outside_code(text: str, transform: Any) -> str:
    """Apply ``transform`` to the parts of markdown ``text`` outside fences and code spans."""
    out: list[str] = []
    pos = 0
    for match in _FENCE.finditer(text):
        out.append(_outside_spans(text[pos : match.start()], transform))
        out.append(match.group(0))
        pos = match.end()
    out.append(_outside_spans(text[pos:], transform))
    return "".join(out)


def _outside_spans(text: str, transform: Any) -> str:
    out: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(transform(text[pos : match.start()]))
        out.append(match.group(0))
        pos = match.end()
    out.append(transform(text[pos:]))
    return "".join(out)


def _defuse(text: str) -> str:
    text = _MENTION.sub("@" + ZWSP, text)
    return _KEYWORD.sub(lambda m: m.group(1) + "#" + ZWSP, text)


def no_markers(text: str) -> str:
    """``<!--`` and ``-->`` defused by a zero-width space (literal: entities are not decoded
    inside code), so untrusted text never opens or closes a hidden marker."""
    return text.replace("<!--", "<!-" + ZWSP + "-").replace("-->", "-" + ZWSP + "->")


def neutralize(text: str) -> str:
    """Defuse HTML comments everywhere, and mentions/closing keywords outside code."""
    return _outside_code(no_markers(text), _defuse)


_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)


def truncate(text: str, limit: int = MAX_BODY) -> str:
    """Cut ``text`` to ``limit`` characters with a visible note (never mid-way silently), at a
    line's end, closing the code fence and the ``<details>`` blocks the cut leaves open (an
    unclosed block would fold the note and everything a later edit appends)."""
    if len(text) <= limit:
        return text
    note = f"\n\n… truncated: {len(text) - limit:,} more characters were not shown.\n"
    room = max(0, limit - len(note))
    kept = _at_line(text, room)
    closers = _closers(kept)
    if len(kept) + len(closers) > room:  # closing needs room the first cut took
        kept = _at_line(text, room - len(closers))
        closers = _closers(kept)
    return kept + closers + note


def _at_line(text: str, size: int) -> str:
    """``text`` cut to at most ``size`` characters, at the end of a line when it has one."""
    kept = text[: max(0, size)]
    return kept[: kept.rfind("\n") + 1] if "\n" in kept else kept


def _closers(kept: str) -> str:
    """What closes the code fence and the ``<details>`` blocks ``kept`` leaves open."""
    closers = ""
    fences = _FENCE_LINE.findall(kept)
    if len(fences) % 2:
        closers += "\n" + fences[-1]
    open_blocks = kept.count("<details>") + kept.count("<details ") - kept.count("</details>")
    return closers + "\n</details>" * max(0, open_blocks)


def truncate_utf8(text: str, max_bytes: int, suffix: str = " …") -> str:
    """``text`` cut so that its UTF-8 encoding, ``suffix`` included, is at most ``max_bytes``
    (GitHub counts some limits in bytes: a non-ASCII text fits fewer characters)."""
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    room = max_bytes - len(suffix.encode("utf-8"))
    # never a partial character: decoding drops the bytes of one cut in the middle
    return text.encode("utf-8")[: max(0, room)].decode("utf-8", errors="ignore") + suffix


def fence(text: str, info: str = "") -> str:
    """A code fence longer than any backtick run in ``text``."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def inline(text: str) -> str:
    """A code span safe for any ``text`` (one line)."""
    text = text.replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _one_line(text: str) -> str:
    flat = text.replace("\r\n", " ").replace("\n", " ").replace("\t", " ")
    return no_markers(_CONTROL.sub(" ", flat))


def text(value: str, *, line_start: bool = False) -> str:
    """Inline plain text: every Markdown/HTML construct rendered literally, on one line.
    ``line_start``: the text begins a line (or a list item), where ``-``, ``>``, ``1.`` … would
    open a block."""
    escaped = _one_line(value).replace("&", "&amp;").replace("<", "&lt;")
    escaped = _INLINE_SPECIAL.sub(r"\\\1", escaped)
    if line_start:
        escaped = _LINE_START.sub(r"\1\\\2", escaped)
    return escaped.replace("@", "@" + ZWSP)


_LEAD = "([{'\"+−"  # opening punctuation (and a change's +/−) kept outside a code span
_TRAIL = ".,;:!?'\""
_QUOTED = re.compile(r"`([^`]+)`")
_DOTTED = re.compile(r"[A-Za-z][\w-]+\.[A-Za-z][\w.-]*")


def _identifier(token: str) -> bool:
    """A flag, path, env/snake_case name, ``key=value`` or dotted name: shown as code."""
    if len(token) < 2 or "|" in token or not any(c.isalnum() for c in token):
        return False
    if token.startswith("--") and token[2:3].isalpha():
        return True
    if re.search(r"[A-Za-z0-9]_|_[A-Za-z0-9*]|[A-Za-z0-9]=|[A-Za-z0-9]\[", token):
        return True
    if "/" in token and re.search(r"[A-Za-z]", token) and re.search(r"[._:-]", token):
        return True
    return _DOTTED.fullmatch(token) is not None


def _split_token(token: str) -> tuple[str, str, str]:
    """(leading punctuation, core, trailing punctuation); a closing bracket stays with the
    core when the core opens it (``extra_args[2]``)."""
    start = 0
    while start < len(token) and token[start] in _LEAD:
        start += 1
    end = len(token)
    while end > start:
        last, core = token[end - 1], token[start:end]
        opener = {")": "(", "]": "["}.get(last)
        if last in _TRAIL or (opener and core.count(last) > core.count(opener)):
            end -= 1
        else:
            break
    return token[:start], token[start:end], token[end:]


def _flag_value(parts: list[str], index: int) -> str | None:
    """The value of the flag at ``parts[index]`` when it ends the clause (``--x 32;``, ``--x
    32`` at the end) or leads to ``→``: the two are one code span. None otherwise (``--host is
    front-end only``)."""
    _, core, trail = _split_token(parts[index])
    if trail or "=" in core or not (core.startswith("--") and _identifier(core)):
        return None
    after = parts[index + 2] if index + 2 < len(parts) else None
    if after is None or after.startswith("-") or after == "→":
        return None
    lead, value, value_trail = _split_token(after)
    following = parts[index + 4] if index + 4 < len(parts) else None
    if not value or lead or not (value_trail or following in (None, "→")):
        return None
    return value


def _words(value: str) -> str:
    parts = re.split(r"(\s+)", value)  # words at even indexes, whitespace at odd ones
    out: list[str] = []
    index = 0
    while index < len(parts):
        token = parts[index]
        if not token or token.isspace():
            out.append(token)
            index += 1
            continue
        lead, core, trail = _split_token(token)
        flag_value = _flag_value(parts, index)
        if flag_value is not None:
            value_trail = _split_token(parts[index + 2])[2]
            out += [text(lead), code(f"{core} {flag_value}"), text(value_trail)]
            index += 3
            continue
        beside_arrow = "→" in (
            parts[index - 2] if index >= 2 else None,
            parts[index + 2] if index + 2 < len(parts) else None,
        )
        if core and core != "→" and (_identifier(core) or beside_arrow):
            out += [text(lead), code(core), text(trail)]
        else:
            out.append(text(token))
        index += 1
    return "".join(out)


def prose(value: str) -> str:
    """Inline text with its identifiers in code spans: ```…```-quoted parts, flags (with the
    value that ends their clause), paths, snake_case and ENV names, ``key=value``, dotted
    names and the values either side of ``→``. The rest is :func:`text` (escaped), so
    untrusted text stays inert and a reader sees ``aiter_triton_mxfp4_bf16`` as code, not
    ``aiter\\_triton…``."""
    flat = _one_line(value)
    out: list[str] = []
    pos = 0
    for match in _QUOTED.finditer(flat):
        out.append(_free_text(flat[pos : match.start()]))
        out.append(code(match.group(1)))
        pos = match.end()
    out.append(_free_text(flat[pos:]))
    return "".join(out)


# a word that opens a JSON object (``{"``, ``{}``) or array (``[`` and a JSON value or ``]``)
_JSON_START = re.compile(
    r"""(?:(?<=\s)|^) (?: \{\s*["}] | \[\s*[-"\d\[{\]] | \[\s*(?:true|false|null)\b )""",
    re.VERBOSE,
)
_FLAG_BEFORE = re.compile(r"(?:(?<=\s)|^|(?<=[+−]))(--[A-Za-z][\w.-]*) $")


def _json_end(text: str, start: int) -> int | None:
    """The index after the JSON literal that opens at ``text[start]``; None if unbalanced."""
    depth, in_string, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _free_text(value: str) -> str:
    """:func:`_words`, with every JSON literal (and the flag it is the value of) one code
    span: ``--x {"a": 1, "b": [2]}`` split at its spaces and quotes read as scraps."""
    out: list[str] = []
    pos = 0
    for match in _JSON_START.finditer(value):
        if match.start() < pos:
            continue
        end = _json_end(value, match.start())
        if end is None:
            continue
        begin = match.start()
        flag = _FLAG_BEFORE.search(value[pos:begin])
        if flag:
            begin = pos + flag.start(1)
        out.append(_words(value[pos:begin]))
        out.append(code(value[begin:end]))
        pos = end
    out.append(_words(value[pos:]))
    return "".join(out)


def cell(markdown: str) -> str:
    """Inline Markdown made safe for a GFM table cell: every unescaped ``|`` (in code spans
    too, where GitHub's table parser still splits on it) becomes ``\\|``."""
    return re.sub(r"(?<!\\)\|", r"\\|", markdown)


def code(value: str) -> str:
    """An inline code span that ``value`` cannot close (mentions do not fire in code)."""
    content = _one_line(value)
    if not content.strip():
        return "`(empty)`"
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * (longest + 1)
    if content.startswith("`") or content.endswith("`"):
        content = f" {content} "
    return f"{fence}{content}{fence}"


def fenced(value: str, info: str = "") -> str:
    """A fenced code block that ``value`` cannot close."""
    content = no_markers(_CONTROL.sub(" ", value.replace("\r\n", "\n")))
    longest = max((len(run) for run in _BACKTICKS.findall(content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{content.rstrip(chr(10))}\n{fence}"


def safe_url(url: str | None) -> str | None:
    """``url`` if it is a plain https URL that cannot break out of ``[…](…)``, else None."""
    if url and _SAFE_URL.fullmatch(url) and "(" not in url and ")" not in url:
        return url
    return None


def link(label_markdown: str, url: str | None) -> str:
    """``[label](url)`` for a safe URL; the bare label otherwise. The label is Markdown."""
    target = safe_url(url)
    return f"[{label_markdown}]({target})" if target else label_markdown


def sha8(sha: str) -> str:
    return text(sha[:8])


def visible_words(markdown: str) -> int:
    """Words a reader sees without opening anything: no HTML comment, no ``<details>`` block,
    no ``<sub>`` small print (the bot's footer)."""
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.S)
    text = re.sub(r"<details>.*?</details>|<sub>.*?</sub>", " ", text, flags=re.S)
    return len(text.split())
