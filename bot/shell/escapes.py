"""Backslash escapes as bash decodes them: ``$'…'``, ``printf`` formats, ``%b``/``echo -e``.

One decoder for every caller (word expansion, the pure ``printf``/``echo`` models, the job-log
word splitter), because bash works on BYTES: ``\\303\\251`` and ``\\xc3\\xa9`` are the two bytes
of UTF-8 ``é``, not the two characters ``Ã©``. Escapes produce bytes; ``\\u``/``\\U`` produce
the (extended, up to six-byte) UTF-8 encoding bash's ``u32toutf8`` writes, even for surrogates
and values past U+10FFFF. The bytes become text once, at the end, as UTF-8; a sequence that is
not valid UTF-8 becomes U+FFFD per maximal invalid subpart (Python's ``"replace"``), the one
deterministic stand-in for a raw byte bash would pass through.
"""

from __future__ import annotations

from typing import Literal

# $'…': ANSI-C quoting; "printf": a printf format; "b": printf %b and echo -e.
Dialect = Literal["ansi-c", "printf", "b"]

_SIMPLE = {
    "a": 0x07, "b": 0x08, "e": 0x1B, "E": 0x1B, "f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09,
    "v": 0x0B, "\\": 0x5C, "'": 0x27, '"': 0x22, "?": 0x3F,
}  # fmt: skip
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}


def to_text(data: bytes) -> str:
    """Decoded bytes → text, as UTF-8 with U+FFFD for invalid sequences (see module doc)."""
    return data.decode("utf-8", "replace")


def encode(text: str) -> bytes:
    """Literal source text → the bytes bash sees (lone surrogates kept, never an error)."""
    return text.encode("utf-8", "surrogatepass")


def utf8_extended(code: int) -> bytes:
    """bash's ``u32toutf8``: the original (RFC 2279) UTF-8 form, up to six bytes."""
    if code < 0x80:
        return bytes((code,))
    for count, limit in ((2, 0x800), (3, 0x10000), (4, 0x200000), (5, 0x4000000), (6, 1 << 31)):
        if code < limit:
            tail = [0x80 | (code >> (6 * k)) & 0x3F for k in reversed(range(count - 1))]
            lead = (0xFF << (8 - count)) & 0xFF | (code >> (6 * (count - 1)))
            return bytes((lead, *tail))
    return b""  # past 0x7FFFFFFF bash writes nothing


def _control(char: str) -> int:
    # bash's TOCTRL: `\c?` is DEL, otherwise the upper-cased character masked to 5 bits
    return 0x7F if char == "?" else ord(char.upper()[:1] or char) & 0x1F


def _take(text: str, start: int, alphabet: str, limit: int) -> int:
    end = start
    while end < len(text) and end - start < limit and text[end] in alphabet:
        end += 1
    return end


def escape_at(text: str, i: int, dialect: Dialect) -> tuple[bytes | None, int]:
    """Decode the escape whose backslash is ``text[i]``: (bytes, index after it).

    ``None`` bytes mean printf's ``\\c`` (stop all output). A backslash that starts no escape
    is kept with the character after it, as bash does.
    """
    if i + 1 >= len(text):
        return b"\\", i + 1
    code = text[i + 1]
    if code in _SIMPLE and not (dialect == "b" and code in "\"'?"):
        return bytes((_SIMPLE[code],)), i + 2
    if code in _OCTAL:
        # %b takes \0nnn (up to three digits after the zero); elsewhere \nnn, one to three
        start = i + 2 if dialect == "b" and code == "0" else i + 1
        end = _take(text, start, _OCTAL, 3)
        digits = text[start:end] or "0"
        return bytes((int(digits, 8) & 0xFF,)), end
    if code in _HEX_WIDTH:
        end = _take(text, i + 2, _HEX, _HEX_WIDTH[code])
        if end == i + 2:
            return encode("\\" + code), end
        value = int(text[i + 2 : end], 16)
        return (bytes((value,)) if code == "x" else utf8_extended(value)), end
    if code == "c":
        if dialect != "ansi-c":
            return None, i + 2
        if i + 2 >= len(text):
            return b"\\c", i + 2
        char = text[i + 2]
        # `\c\\` is control-backslash: the doubled backslash counts as one character
        end = i + 4 if char == "\\" and text[i + 3 : i + 4] == "\\" else i + 3
        head = encode(char)
        return bytes((_control(char) if char.isascii() else head[0] & 0x1F,)) + head[1:], end
    return encode("\\" + code), i + 2


def scan_ansi_c(text: str, start: int = 0, *, quoted: bool = True) -> tuple[bytes, int]:
    """Decode ``$'…'`` from ``start`` (just past the opening quote) up to the closing quote.

    Returns the bytes and the index of the closing quote, or ``len(text)`` if there is none
    (``quoted=False``: no quote ends it). A NUL byte ends the string, as in bash; the rest of
    the quote still belongs to the word.
    """
    out = bytearray()
    i = start
    ended = False
    while i < len(text) and not (quoted and text[i] == "'"):
        chunk: bytes | None
        if text[i] == "\\":
            chunk, i = escape_at(text, i, "ansi-c")
        else:
            chunk, i = encode(text[i]), i + 1
        if ended or chunk is None:
            continue
        if 0 in chunk:
            chunk, ended = chunk[: chunk.index(0)], True
        out += chunk
    return bytes(out), i


def decode_ansi_c(body: str) -> str:
    """Contents of ``$'…'`` (without the quotes; also ``${x@E}``) → the string bash produces."""
    return to_text(scan_ansi_c(body, quoted=False)[0])


def decode_printf(text: str, *, for_b: bool) -> tuple[str, bool]:
    """Escapes of a printf format (or of ``%b``/``echo -e`` with ``for_b``); second value:
    ``\\c`` was met and output stops there."""
    out = bytearray()
    i = 0
    dialect: Dialect = "b" if for_b else "printf"
    while i < len(text):
        if text[i] != "\\":
            j = text.find("\\", i)
            j = len(text) if j < 0 else j
            out += encode(text[i:j])
            i = j
            continue
        chunk, i = escape_at(text, i, dialect)
        if chunk is None:
            return to_text(bytes(out)), True
        out += chunk
    return to_text(bytes(out)), False


__all__ = [
    "Dialect",
    "decode_ansi_c",
    "decode_printf",
    "encode",
    "escape_at",
    "scan_ansi_c",
    "to_text",
    "utf8_extended",
]
