"""Path strings: the renderer's provenance form, with quoted keys for dots and brackets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.recipes.edit import PathSyntaxError, format_path, parse_path


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("", ()),
        ("model.docker_image.amd", ("model", "docker_image", "amd")),
        (
            "strategy_overrides.single_node_tp.hardware_overrides.mi355x.extra_args[0]",
            (
                "strategy_overrides",
                "single_node_tp",
                "hardware_overrides",
                "mi355x",
                "extra_args",
                0,
            ),
        ),
        ("hardware_overrides.amd.extra_args[3]", ("hardware_overrides", "amd", "extra_args", 3)),
        ('meta["a.b"][2].c', ("meta", "a.b", 2, "c")),
        ('["top.level"]', ("top.level",)),
        ('a[""]', ("a", "")),
        ('a["x]\\"y"]', ("a", 'x]"y')),
        ("a[0][1]", ("a", 0, 1)),
        ("a[-1]", ("a", -1)),
        ("with space.8", ("with space", "8")),
    ],
)
def test_parse_and_format_examples(text: str, path: tuple[str | int, ...]) -> None:
    assert parse_path(text) == path
    assert format_path(path) == text


@given(st.lists(st.text(max_size=8) | st.integers(-3, 10**6), max_size=6))
def test_format_then_parse_round_trips(parts: list[str | int]) -> None:
    path = tuple(parts)
    assert parse_path(format_path(path)) == path


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a..b", "empty key at column 3"),
        (".a", "empty key at column 1"),
        ("a.", "path ends with a dot"),
        ("a[x]", 'expected [N] or ["key"] at column 2'),
        ('a["x"', "expected a quoted key and ']' at column 3"),
        ('a["x', "bad quoted key at column 3: Unterminated string starting at"),
        ("]a", "unexpected ']' at column 1"),
        ("a]b", "expected '.' or '[' at column 2"),
        ("a[0]b", "expected '.' or '[' at column 5"),
    ],
)
def test_malformed_paths_say_where(text: str, reason: str) -> None:
    with pytest.raises(PathSyntaxError) as caught:
        parse_path(text)
    message = str(caught.value)
    assert message.startswith(f"<path>: key '{text}': {reason}")
    assert "\n" not in message
