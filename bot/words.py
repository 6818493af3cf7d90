"""Counted nouns in the texts people read: "1 model", "2 models", never "model(s)"."""

from __future__ import annotations


def count(number: int, one: str, many: str | None = None) -> str:
    """``number`` and the noun that agrees with it: ``count(1, "key")`` is "1 key",
    ``count(3, "key")`` "3 keys"; ``many`` spells an irregular plural
    (``count(2, "run or job", "runs or jobs")``)."""
    return f"{number} {one if number == 1 else many or one + 's'}"
