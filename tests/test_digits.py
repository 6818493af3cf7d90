"""Whole numbers as the inputs recipe-sync reads write them: ASCII digits only."""

from __future__ import annotations

import pytest

from bot.digits import is_integer


@pytest.mark.parametrize(
    ("text", "signed", "expected"),
    [
        ("0", False, True),
        ("0042", False, True),
        ("", False, False),
        ("¹", False, False),  # str.isdigit() takes it; int() does not
        ("٣", False, False),  # an Arabic-Indic digit: int() takes it, bash does not
        ("-3", False, False),
        ("-3", True, True),
        ("--3", True, False),
        ("-", True, False),
        ("3a", False, False),
    ],
)
def test_only_ascii_digits_after_one_optional_minus(
    text: str, signed: bool, expected: bool
) -> None:
    assert is_integer(text, signed=signed) is expected
