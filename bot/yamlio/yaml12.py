"""YAML as the upstream recipes builder reads it (js-yaml 4: YAML 1.2 core schema + timestamps).

The builder is a node script using js-yaml 4's default schema. What it sees differs from
PyYAML's YAML 1.1 defaults, and those differences reach rendered commands:

* only ``true/True/TRUE/false/False/FALSE`` are booleans (``yes``, ``on``, ``n`` stay strings);
* integers are decimal, ``0x``, ``0o`` or ``0b``; ``0755`` is decimal 755, ``1:30`` is a
  string (no sexagesimal), underscores are not digits;
* every number is a JavaScript double: an integral float such as ``1.0`` is the integer 1
  (``JSON.stringify`` and ``String()`` both print ``1``);
* dates are turned into ``YYYY-MM-DD`` strings (what the builder's output shows);
* duplicate mapping keys are an error, as in js-yaml.

Parsing uses libyaml (PyYAML's C parser) with our own resolver and constructors, which is
several times faster than ruamel and fast enough for the 2.5 s full-corpus goal.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import yaml

from bot.errors import InputError, Location
from bot.yamlio.bounds import check_expansion

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_INT = re.compile(r"[-+]?(?:0b[01]+|0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)\Z")
_FLOAT = re.compile(
    r"(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))\Z"
)
_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?"
    r"(?:[ \t]*(Z|[-+][0-9]{1,2}(?::?[0-9]{2})?))?\Z"
)
_TS_ANY = re.compile(_DATE.pattern[:-2] + r"\Z|" + _TIMESTAMP.pattern)

_MAX_SAFE = 2**53


def js_number(value: float) -> int | float:
    """A JavaScript number as Python sees it: integral doubles become ints."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


class _Loader(_BaseLoader):  # type: ignore[misc]
    """libyaml parser + YAML 1.2 core resolution (js-yaml 4 default schema)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}
    yaml_constructors: ClassVar[dict[Any, Any]] = dict(_BaseLoader.yaml_constructors)

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        # `<<` merges are resolved first (SafeConstructor.flatten_mapping puts merged keys
        # before the explicit ones, so explicit keys win); an explicit key given twice is
        # an error, as in js-yaml.
        explicit = {id(key_node) for key_node, _ in node.value}
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, list | dict):
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be a scalar", key_node.start_mark
                )
            if not isinstance(key, str):
                key = js_string_key(key)
            if id(key_node) in explicit:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicated mapping key '{key}'", key_node.start_mark
                    )
                seen.add(key)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def js_string_key(key: Any) -> str:
    """How a non-string scalar mapping key reads as a JS object key."""
    if key is None:
        return "null"
    if key is True:
        return "true"
    if key is False:
        return "false"
    if isinstance(key, float):
        return js_float_str(key)
    return str(key)


def js_float_str(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    number = js_number(value)
    if isinstance(number, int):
        return str(number)
    text = repr(number)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa.removesuffix('.0')}e{sign}{exponent.lstrip('+-').lstrip('0')}"
    return text


def _construct_int(loader: Any, node: Any) -> int | float:
    text = loader.construct_scalar(node)
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-")
    if digits[:2] == "0b":
        value = int(digits[2:], 2)
    elif digits[:2] == "0x":
        value = int(digits[2:], 16)
    elif digits[:2] == "0o":
        value = int(digits[2:], 8)
    else:
        value = int(digits, 10)
    value *= sign
    # beyond 2**53 a JS number is a rounded double
    return value if abs(value) <= _MAX_SAFE else js_number(float(value))


def _construct_float(loader: Any, node: Any) -> int | float:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".nan"):
        return math.nan
    if text.endswith(".inf"):
        return -math.inf if text.startswith("-") else math.inf
    return js_number(float(text))


def _construct_bool(loader: Any, node: Any) -> bool:
    return bool(loader.construct_scalar(node).lower() == "true")


def _construct_null(loader: Any, node: Any) -> None:
    loader.construct_scalar(node)


def _construct_timestamp(loader: Any, node: Any) -> str:
    text = str(loader.construct_scalar(node))
    date = _DATE.match(text)
    if date:
        return text
    match = _TIMESTAMP.match(text)
    if match is None:  # explicitly tagged but not a timestamp: keep the text
        return str(text)
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = (match.group(7) or "")[:3].ljust(3, "0")
    moment = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.UTC)
    zone = match.group(8)
    if zone and zone != "Z":
        zsign = -1 if zone[0] == "-" else 1
        parts = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(parts[:2] or 0), minutes=int(parts[2:4] or 0))
        moment -= zsign * offset
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + fraction + "Z"


def _add(tag: str, pattern: re.Pattern[str], first: str | None) -> None:
    _Loader.add_implicit_resolver(tag, pattern, list(first) if first is not None else None)


_add("tag:yaml.org,2002:null", _NULL, "~nN")
_Loader.add_implicit_resolver("tag:yaml.org,2002:null", _NULL, [""])
_add("tag:yaml.org,2002:bool", _BOOL, "tTfF")
_add("tag:yaml.org,2002:int", _INT, "-+0123456789")
_add("tag:yaml.org,2002:float", _FLOAT, "-+0123456789.")
_add("tag:yaml.org,2002:timestamp", _TS_ANY, "0123456789")
_add("tag:yaml.org,2002:merge", re.compile(r"<<\Z"), "<")
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_Loader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
_Loader.add_constructor("tag:yaml.org,2002:null", _construct_null)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_mapping)


def load_yaml(text: str, name: str) -> Any:
    """Parse one document; malformed YAML raises :class:`InputError` naming file and line."""
    try:
        data = yaml.load(text, Loader=_Loader)
    except RecursionError:
        raise InputError(Location(name), "malformed YAML: nested too deeply") from None
    except yaml.MarkedYAMLError as err:
        # locate at the construct being parsed ("while parsing a flow sequence") if known
        mark = err.context_mark or err.problem_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or "syntax error"
        if err.context and err.problem_mark is not None:
            problem = f"{err.context}: {problem} (line {err.problem_mark.line + 1})"
        key = key_path_at(text, line) if line is not None else ""
        raise InputError(Location(name, key, line), f"malformed YAML: {problem}") from err
    except yaml.YAMLError as err:
        raise InputError(Location(name), f"malformed YAML: {err}") from err
    check_expansion(data, name, lambda path: line_of(text, path))
    return data


_KEY_LINE = re.compile(r"( *)(?:- +)*([^\s#'\"-][^:#]*?|'[^']*'|\"[^\"]*\"):(?:\s|$)")


def key_path_at(text: str, line: int) -> str:
    """Best-effort dotted key path enclosing ``line`` (1-based), read from indentation.

    Used only to name the key near a syntax error, where no parse tree exists.
    """
    lines = text.splitlines()[:line]
    limit: int | None = None
    keys: list[str] = []
    for raw in reversed(lines):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if limit is not None and indent >= limit:
            continue
        match = _KEY_LINE.match(raw)
        if limit is None:
            limit = indent + 1  # the error line's own key counts
        if match is None:
            continue
        keys.append(match.group(2).strip("'\""))
        limit = indent
        if indent == 0:
            break
    return ".".join(reversed(keys))


def line_of(text: str, path: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node on ``path`` (only used to locate an error)."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        return None
    line: int | None = None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == str(part):
                    line = key_node.start_mark.line + 1
                    node = value_node
                    break
            else:
                break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if not 0 <= part < len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
