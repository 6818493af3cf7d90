"""Split one line of bash-quoted words back into the argv it stands for.

Both places a job log shows the executed command use bash quoting, never anything else:

* ``printf '%q '`` (agentic command files, tee'd to the log): safe words verbatim, otherwise
  backslash escapes (``\\{\\"k\\":1\\}``), the empty word as ``''``, and words with control
  characters as ANSI-C ``$'…\\n…'``;
* xtrace (``set -x``): words needing quotes wrapped in ``'…'``, an embedded quote as ``'\\''``,
  control characters as ``$'…'``.

This parser implements exactly the quoting rules those forms use: single quotes, double quotes
(backslash escapes only ``$ ` " \\`` and newline), backslash outside quotes, ``$'…'`` with all
ANSI-C escapes (octal and ``\\x`` escapes are bytes, decoded as UTF-8 at the end of the word), and
adjacent quoted parts concatenating into one word. It expands nothing. Python's ``shlex`` does
not know ``$'…'`` and so is not enough. An unquoted shell operator or an unterminated quote
means the line is not a printed command: :class:`QuotingError`.
"""

from __future__ import annotations

from bot.shell.escapes import scan_ansi_c, to_text

_BLANKS = " \t"
_OPERATORS = ";&|<>()"


class QuotingError(ValueError):
    """The text is not a sequence of bash-quoted words (unterminated quote, operator, …)."""

    def __init__(self, message: str, *, unterminated: bool = False) -> None:
        super().__init__(message)
        # an open '…' that a following line might close: bash prints a newline inside a
        # single-quoted word as is (other quotes never span lines in printf %q / xtrace)
        self.unterminated = unterminated


def _ansi_c(text: str, start: int, out: bytearray) -> int:
    """Decode the body of ``$'…'`` starting at ``start`` (after the quote) into ``out``;
    return the index just past the closing quote."""
    data, end = scan_ansi_c(text, start)
    if end >= len(text):
        raise QuotingError("unterminated $'…' quote")
    out += data
    return end + 1


def _finish(word: bytearray) -> str:
    return to_text(bytes(word))


def split_words(text: str) -> tuple[str, ...]:
    """The argv that the bash-quoted ``text`` stands for (one line, no expansions)."""
    words: list[str] = []
    word = bytearray()
    in_word = False  # distinguishes the empty word '' from no word
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char in _BLANKS:
            if in_word:
                words.append(_finish(word))
                word = bytearray()
                in_word = False
            i += 1
            continue
        in_word = True
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise QuotingError("unterminated single quote", unterminated=True)
            word += text[i + 1 : end].encode("utf-8", "surrogatepass")
            i = end + 1
        elif char == "$" and i + 1 < n and text[i + 1] == "'":
            i = _ansi_c(text, i + 2, word)
        elif char == '"' or (char == "$" and i + 1 < n and text[i + 1] == '"'):
            i = _double_quoted(text, i + (2 if char == "$" else 1), word)
        elif char == "\\":
            if i + 1 >= n:
                raise QuotingError("line ends in a backslash")
            word += text[i + 1].encode("utf-8", "surrogatepass")
            i += 2
        elif char in _OPERATORS or char == "\n":
            raise QuotingError(f"unquoted shell operator or line break {char!r}")
        else:
            word += char.encode("utf-8", "surrogatepass")
            i += 1
    if in_word:
        words.append(_finish(word))
    return tuple(words)


def _double_quoted(text: str, start: int, out: bytearray) -> int:
    i = start
    while i < len(text):
        char = text[i]
        if char == '"':
            return i + 1
        if char == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out += text[i + 1].encode("utf-8", "surrogatepass")
            i += 2
            continue
        out += char.encode("utf-8", "surrogatepass")
        i += 1
    raise QuotingError("unterminated double quote")
