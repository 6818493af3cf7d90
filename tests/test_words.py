"""Counted nouns agree with their number (issue #35 item 5: "1 config keys", "run(s)")."""

from __future__ import annotations

from bot.words import count


def test_one_is_singular_and_every_other_number_plural() -> None:
    assert count(1, "config key") == "1 config key"
    assert count(0, "config key") == "0 config keys"
    assert count(2, "config key") == "2 config keys"


def test_an_irregular_plural_is_spelled_out() -> None:
    assert count(1, "run or job", "runs or jobs") == "1 run or job"
    assert count(3, "run or job", "runs or jobs") == "3 runs or jobs"
