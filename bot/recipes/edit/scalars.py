"""Write one scalar as YAML text in a wanted style, and prove it reads back as that value.

Every rendering is checked by parsing it in the context it will sit in (a block mapping
value or a flow sequence item), both as YAML 1.2 (ruamel, what we verify against) and as
YAML 1.1 (PyYAML): a plain ``yes`` or ``1e3`` that two readers disagree on gets quoted.
"""

from __future__ import annotations

import datetime as dt
import math
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

if TYPE_CHECKING:
    from bot.recipes.edit.edits import Scalar

# ruamel's node styles: None = plain, '"', "'", '|', '>'.
Style = Literal["", '"', "'"]
Context = Literal["block", "flow"]

_YAML12 = YAML(typ="safe", pure=True)


def is_scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool | dt.date)


@lru_cache(maxsize=4096)
def _reads_back(text: str, context: Context) -> tuple[bool, Any]:
    doc = f"k: {text}\n" if context == "block" else f"k: [{text}]\n"
    try:
        new = _YAML12.load(doc)
        old = yaml.safe_load(doc)
    except (YAMLError, yaml.YAMLError, ValueError):  # ruamel/PyYAML raise ValueError on '._'
        return False, None
    if not (isinstance(new, dict) and isinstance(old, dict)):
        return False, None
    got_new = new.get("k") if context == "block" else _single(new.get("k"))
    got_old = old.get("k") if context == "block" else _single(old.get("k"))
    return True, (got_new, got_old)


def _single(items: object) -> object:
    return items[0] if isinstance(items, list) and len(items) == 1 else _Missing


class _Missing:
    pass


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and b != b))


def reads_as(text: str, value: Scalar, context: Context) -> bool:
    """Whether ``text`` reads back as exactly ``value`` (type included) in YAML 1.2 and 1.1."""
    ok, got = _reads_back(text, context)
    if not ok:
        return False
    new, old = got
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return _same(new, value) and _same(old, value)
    return _same(new, value) and _same(old, value)


def _double_quoted(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif char == "\0":
            out.append("\\0")
        elif _printable(code):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _printable(code: int) -> bool:
    # YAML's c-printable minus line breaks (NEL, LS, PS count as breaks in YAML 1.1 readers)
    # and minus the BOM: those are written as escapes.
    return (
        0x20 <= code <= 0x7E
        or (0xA0 <= code <= 0xD7FF and code not in (0x2028, 0x2029))
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    )


def printable(text: str) -> bool:
    """Whether ``text`` can appear literally on one line of YAML (tabs allowed)."""
    return all(char == "\t" or _printable(ord(char)) for char in text)


def _single_quoted(text: str) -> str | None:
    if any(not _printable(ord(char)) for char in text):
        return None
    return "'" + text.replace("'", "''") + "'"


def _float_text(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:  # YAML 1.1 floats need a dot: 1e-05 -> 1.0e-05
        mantissa += ".0"
    if exponent and exponent[0] not in "+-":
        exponent = "+" + exponent
    return mantissa + ("e" + exponent if exponent else "")


def _non_string_text(value: Scalar) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    if isinstance(value, dt.datetime):
        raise ValueError("datetimes are not supported; use a date or a string")
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"not a scalar: {value!r}")


def format_scalar(value: Scalar, styles: tuple[Style, ...], context: Context) -> str:
    """Render ``value``; strings try ``styles`` in order, then double quotes (always works).

    Non-strings are written plain (quoting would turn them into strings).
    """
    if not isinstance(value, str):
        text = _non_string_text(value)
        if not reads_as(text, value, context):
            raise ValueError(f"cannot write {value!r} so that it reads back unchanged")
        return text
    for style in (*styles, '"'):
        candidate: str | None
        if style == "":
            candidate = value if value and "\n" not in value and "\r" not in value else None
        elif style == "'":
            candidate = _single_quoted(value) if "\n" not in value else None
        else:
            candidate = _double_quoted(value)
        if candidate is not None and reads_as(candidate, value, context):
            return candidate
    raise ValueError(f"cannot write {value!r} as a YAML scalar")


def format_key(key: str, styles: tuple[Style, ...] = ("",)) -> str:
    """A mapping key: plain when it reads back as the same one string key, else quoted."""
    for style in (*styles, '"'):
        if style == "":
            candidate = key if key and "\n" not in key and "\r" not in key else None
        elif style == "'":
            candidate = _single_quoted(key) if "\n" not in key else None
        else:
            candidate = _double_quoted(key)
        if candidate is not None and _key_reads_back(candidate, key):
            return candidate
    raise ValueError(f"cannot write {key!r} as a mapping key")


@lru_cache(maxsize=4096)
def _key_reads_back(text: str, key: str) -> bool:
    if text == "<<":  # the merge key
        return False
    for doc in (f"{text}: 0\n", f"{{{text}: 0}}\n"):
        try:
            new, old = _YAML12.load(doc), yaml.safe_load(doc)
        except (YAMLError, yaml.YAMLError, ValueError):
            return False
        for got in (new, old):
            if not (isinstance(got, dict) and list(got) == [key] and got[key] == 0):
                return False
    return True


def list_family(key: str) -> str:
    """Lists whose items a recipe quotes alike: every ``*args`` list (``args``,
    ``extra_args``, ``base_args``) is one family; any other list is its own key's."""
    return "args" if key.endswith("args") else key
