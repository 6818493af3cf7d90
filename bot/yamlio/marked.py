"""Line-marked YAML from libyaml: plain dicts and lists that know where each key and item is.

Master configs, the perf changelog, rules and per-repository settings are read for their
data and for the line of any key an error or a quote names. ruamel.yaml's round-trip loader
gave both, but it is pure Python (a 0.3 MB master config took ~0.5 s); libyaml (PyYAML's C
parser) composes the same file in a few milliseconds with the same line and column marks.

The data is what ruamel.yaml's round-trip loader (YAML 1.2) gives, as plain Python values:
booleans are only ``true``/``false`` (any case variant ruamel accepts), ``0123`` is 123,
underscores are digit separators, dates become :class:`datetime.date`, merge keys (``<<``)
add the keys a mapping does not set itself, after its own, and a key given twice is an error
(or, for the audit's salvage, the first one wins). Differences from ruamel, on input no real
file has: an explicit core tag (``!!str 12``) gives the tagged type instead of ruamel's
``TaggedScalar`` wrapper, and an unknown tag is ignored (the node is read as untagged).
``tests/yamlio/test_marked_history.py`` checks equality with ruamel on every master config
and changelog of the benchmark history.
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

_CLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# YAML 1.2 implicit types as ruamel.yaml resolves them (ruamel/yaml/resolver.py, version 1.2),
# tried in ruamel's order: bool, float, int, merge, null, timestamp.
_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_FLOAT = re.compile(
    r"(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
    r"|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))\Z"
)
_INT = re.compile(r"(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)\Z")
_MERGE = re.compile(r"<<\Z")
_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_TIMESTAMP = re.compile(
    r"(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
    r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?"
    r"(?:[Tt]|[ \t]+)[0-9][0-9]?"
    r":[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\Z"
)
_TIMESTAMP_PARTS = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?"
    r"(?:[ \t]*(Z|[-+][0-9]{1,2})(?::?([0-9]{2}))?)?)?\Z"
)

_TAG = "tag:yaml.org,2002:"


class _Composer(_CLoader):  # type: ignore[misc]
    """libyaml's parser and composer with ruamel's YAML 1.2 resolution (nodes only)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}


for _tag, _pattern, _first in (
    ("bool", _BOOL, "tTfF"),
    ("float", _FLOAT, "-+0123456789."),
    ("int", _INT, "-+0123456789"),
    ("merge", _MERGE, "<"),
    ("null", _NULL, "~nN"),
    ("timestamp", _TIMESTAMP, "0123456789"),
):
    _Composer.add_implicit_resolver(_TAG + _tag, _pattern, list(_first))
_Composer.add_implicit_resolver(_TAG + "null", _NULL, [""])


class MarkedMap(dict[Any, Any]):
    """A mapping with the 0-based (line, column) of each of its keys."""

    __slots__ = ("key_marks",)

    def __init__(self) -> None:
        super().__init__()
        self.key_marks: dict[Any, tuple[int, int]] = {}

    def key_line(self, key: Any) -> int:
        """1-based line of ``key`` (a key this mapping holds)."""
        return self.key_marks[key][0] + 1


class MarkedSeq(list[Any]):
    """A sequence with the 0-based (line, column) of each of its items."""

    __slots__ = ("item_marks",)

    def __init__(self) -> None:
        super().__init__()
        self.item_marks: list[tuple[int, int]] = []

    def item_line(self, index: int) -> int:
        """1-based line of item ``index``."""
        return self.item_marks[index][0] + 1


class MalformedYaml(InputError):
    """Text that is not one well-formed YAML document (``line`` when libyaml knows it);
    ``duplicate`` when the problem is a key given twice in one mapping."""

    def __init__(self, name: str, line: int | None, problem: str, *, duplicate: bool = False):
        super().__init__(Location(name, line=line), f"malformed YAML: {problem}")
        self.line = line
        self.problem = problem
        self.duplicate = duplicate


class _Error(Exception):
    def __init__(self, mark: Any, problem: str, *, duplicate: bool = False) -> None:
        super().__init__(problem)
        self.line = mark.line + 1 if mark is not None else None
        self.problem = problem
        self.duplicate = duplicate


def _mark(node: Any) -> tuple[int, int]:
    return node.start_mark.line, node.start_mark.column


class _Builder:
    """Composed nodes → MarkedMap / MarkedSeq / scalars; an alias is the same object."""

    def __init__(self, *, first_key_wins: bool) -> None:
        self.first_key_wins = first_key_wins
        self.built: dict[int, Any] = {}

    def build(self, node: Any) -> Any:
        done = self.built.get(id(node))
        if done is not None or id(node) in self.built:
            return done
        if isinstance(node, yaml.ScalarNode):
            value = _scalar(node)
            self.built[id(node)] = value
            return value
        if isinstance(node, yaml.SequenceNode):
            seq = MarkedSeq()
            self.built[id(node)] = seq  # before the items: an alias may refer back (a cycle)
            for item in node.value:
                seq.append(self.build(item))
                seq.item_marks.append(_mark(item))
            return seq
        mapping = MarkedMap()
        self.built[id(node)] = mapping
        merged: list[tuple[Any, Any, tuple[int, int]]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merged.extend(self._merge_sources(value_node))
                continue
            key = self._key(key_node)
            if key in mapping:
                if self.first_key_wins:
                    continue
                problem = _duplicate(key, key_node, value_node, node)
                raise _Error(key_node.start_mark, problem, duplicate=True)
            mapping[key] = self.build(value_node)
            mapping.key_marks[key] = _mark(key_node)
        for key, value, mark in merged:  # ruamel: merged keys after the mapping's own
            if key not in mapping:
                mapping[key] = value
                mapping.key_marks[key] = mark
        return mapping

    def _key(self, node: Any) -> Any:
        key = self.build(node)
        if isinstance(key, MarkedSeq):
            return tuple(key)
        if isinstance(key, dict):
            raise _Error(node.start_mark, "a mapping key must not be a mapping")
        return key

    def _merge_sources(self, node: Any) -> list[tuple[Any, Any, tuple[int, int]]]:
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out: list[tuple[Any, Any, tuple[int, int]]] = []
        for source in sources:
            built = self.build(source)
            if not isinstance(built, MarkedMap):
                raise _Error(source.start_mark, "a merge key (<<) needs a mapping")
            out.extend((k, v, built.key_marks[k]) for k, v in built.items())
        return out


def _duplicate(key: Any, key_node: Any, value_node: Any, mapping_node: Any) -> str:
    first = next(v for k, v in mapping_node.value if k.value == key_node.value)
    if isinstance(value_node, yaml.ScalarNode) and isinstance(first, yaml.ScalarNode):
        return (
            f'found duplicate key "{key}" with value "{value_node.value}" '
            f'(original value: "{first.value}")'
        )
    return f'found duplicate key "{key}"'


def _scalar(node: Any) -> Any:
    text: str = node.value
    tag: str = node.tag
    if not tag.startswith(_TAG) or tag == _TAG + "str":
        return text
    kind = tag[len(_TAG) :]
    try:
        if kind == "int":
            return _int(text)
        if kind == "float":
            return _float(text)
        if kind == "bool":
            return text.lower() == "true"
        if kind == "null":
            return None
        if kind == "timestamp":
            return _timestamp(text)
    except ValueError:
        raise _Error(node.start_mark, f"cannot read {text!r} as {kind}") from None
    return text  # merge or value outside a key, binary, …: the text as written


def _int(text: str) -> int:
    digits = text.replace("_", "")
    sign = -1 if digits[:1] == "-" else 1
    digits = digits.lstrip("+-")
    for prefix, base in (("0b", 2), ("0x", 16), ("0o", 8)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)  # YAML 1.2: a leading zero is not octal


def _float(text: str) -> float:
    value = text.replace("_", "").lower()
    sign = -1.0 if value.startswith("-") else 1.0
    bare = value.lstrip("+-")
    if bare == ".inf":
        return sign * math.inf
    if bare == ".nan":
        return math.nan
    return float(value)


def _timestamp(text: str) -> dt.date | dt.datetime:
    match = _TIMESTAMP_PARTS.match(text)
    if match is None:
        raise ValueError(text)
    year, month, day = (int(match.group(i)) for i in (1, 2, 3))
    if match.group(4) is None:
        return dt.date(year, month, day)
    hour, minute, second = (int(match.group(i)) for i in (4, 5, 6))
    micro = int((match.group(7) or "").ljust(6, "0")[:6] or 0)
    moment = dt.datetime(year, month, day, hour, minute, second, micro)
    zone = match.group(8)
    if zone and zone != "Z":  # ruamel: a naive datetime in UTC
        hours, minutes = int(zone), int(match.group(9) or 0)
        moment -= dt.timedelta(hours=hours, minutes=minutes if hours >= 0 else -minutes)
    return moment


def parse_marked(text: str, name: str, *, first_key_wins: bool = False) -> Any:
    """One YAML document as MarkedMap / MarkedSeq / scalars, bounded after alias expansion.

    :class:`MalformedYaml` (a located one-line :class:`InputError`) for malformed YAML, a
    repeated key included unless ``first_key_wins``; an :class:`InputError` for documents
    whose aliases expand past :mod:`bot.yamlio.bounds`' limits. An empty document is None."""
    try:
        node = yaml.compose(text, Loader=_Composer)
        data = _Builder(first_key_wins=first_key_wins).build(node) if node is not None else None
    except RecursionError:
        raise MalformedYaml(name, None, "nested too deeply") from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        raise MalformedYaml(name, line, err.problem or err.context or "syntax error") from err
    except yaml.YAMLError as err:
        raise MalformedYaml(name, None, str(err)) from err
    except _Error as err:
        raise MalformedYaml(name, err.line, err.problem, duplicate=err.duplicate) from None
    check_expansion(data, name, lambda path: line_of(data, path))
    return data


def line_of(data: Any, path: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node on ``path`` that exists in ``data``."""
    line: int | None = None
    node = data
    for part in path:
        if isinstance(node, MarkedMap) and part in node:
            line = node.key_line(part)
            node = node[part]
        elif isinstance(node, MarkedSeq) and isinstance(part, int) and 0 <= part < len(node):
            line = node.item_line(part)
            node = node[part]
        else:
            break
    return line


def to_plain(data: Any) -> Any:
    """Marked containers → plain dicts and lists with string keys (pydantic wants builtins)."""
    if isinstance(data, dict):
        return {str(k): to_plain(v) for k, v in data.items()}
    if isinstance(data, list):
        return [to_plain(v) for v in data]
    return data
