"""The line-marked reader: ruamel.yaml's YAML 1.2 round-trip data as plain values, each key's
and item's line, and one located error for anything malformed."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from bot.errors import InputError
from bot.yamlio.marked import MalformedYaml, MarkedMap, line_of, parse_marked, to_plain


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0123", 123),  # YAML 1.2: a leading zero is not octal
        ("1_000", 1000),
        ("0x1F", 31),
        ("0o17", 15),
        ("-0b101", -5),
        ("+12", 12),
        ("1e3", 1000.0),
        ("1.", 1.0),
        ("1_0.5", 10.5),
        ("-.inf", -math.inf),
        ("yes", "yes"),  # only true/false are booleans
        ("True", True),
        ("~", None),
        ("", None),
        ("12:30", "12:30"),  # no sexagesimal numbers
        ("2026-07-01", dt.date(2026, 7, 1)),
        ("2026-07-01 10:00:00", dt.datetime(2026, 7, 1, 10, 0)),
        ("2026-07-01T10:00:00+02:00", dt.datetime(2026, 7, 1, 8, 0)),
        ("!!str 12", "12"),
        ("!!float 3", 3.0),
        ('"0123"', "0123"),
        ("!custom text", "text"),
    ],
)
def test_scalars_as_ruamel_reads_yaml_1_2(text: str, value: object) -> None:
    got = parse_marked(f"a: {text}\n", "t.yaml")["a"]
    assert got == value and type(got) is type(value)


def test_lines_of_keys_and_items() -> None:
    data = parse_marked("# head\na:\n  b:\n    - x\n    - c: 1\n\n      d: 2\ne: 3\n", "t.yaml")
    assert isinstance(data, MarkedMap)
    assert line_of(data, ["a"]) == 2
    assert line_of(data, ["a", "b", 1]) == 5
    assert line_of(data, ["a", "b", 1, "d"]) == 7
    assert line_of(data, ["a", "missing", 0]) == 2  # the deepest node that exists
    assert line_of(data, ["e"]) == 8


def test_merge_keys_come_after_the_mapping_s_own_and_do_not_override() -> None:
    data = parse_marked("x: &a {p: 1, q: 2}\ny:\n  <<: *a\n  q: 3\n  r: 4\n", "t.yaml")
    assert list(data["y"].items()) == [("q", 3), ("r", 4), ("p", 1)]
    assert to_plain(data) == {"x": {"p": 1, "q": 2}, "y": {"q": 3, "r": 4, "p": 1}}


def test_a_duplicate_key_is_a_located_error_unless_the_first_wins() -> None:
    text = "a: 1\nb: 2\na: 3\n"
    with pytest.raises(MalformedYaml) as caught:
        parse_marked(text, "t.yaml")
    assert caught.value.duplicate and caught.value.line == 3
    assert str(caught.value) == (
        't.yaml:3: malformed YAML: found duplicate key "a" with value "3" (original value: "1")'
    )
    assert parse_marked(text, "t.yaml", first_key_wins=True) == {"a": 1, "b": 2}


def test_syntax_errors_name_file_and_line() -> None:
    with pytest.raises(MalformedYaml) as caught:
        parse_marked("a: [1\nb: 2\n", "c.yaml")
    assert str(caught.value).startswith("c.yaml:2: malformed YAML: ")
    assert not caught.value.duplicate


def test_a_recursive_alias_is_an_error_not_a_hang() -> None:
    with pytest.raises(InputError, match="cycle"):
        parse_marked("a: &x [1, *x]\n", "t.yaml")


def test_deep_nesting_is_an_error() -> None:
    with pytest.raises(InputError, match=r"t\.yaml.*(nest|deeper)"):
        parse_marked("a: " + "[" * 5000 + "]" * 5000 + "\n", "t.yaml")


def test_a_mapping_as_a_key_is_refused() -> None:
    with pytest.raises(MalformedYaml, match="a mapping key must not be a mapping"):
        parse_marked("? {a: 1}\n: x\n", "t.yaml")
