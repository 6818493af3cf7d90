"""The bounded memo every per-process cache uses: least recently used first out."""

from __future__ import annotations

import threading
from functools import partial

import pytest

from bot.memo import BoundedMemo


def test_the_least_recently_used_goes_first() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1  # "a" is now the most recent
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3)
    assert len(memo) == 2
    memo.put("a", 10)  # a new value for a kept key: kept, the bound holds
    assert memo.get("a") == 10 and len(memo) == 2


def test_get_or_make_makes_once_keeps_none_and_keeps_no_failure() -> None:
    memo: BoundedMemo[str, int | None] = BoundedMemo(4)
    calls: list[str] = []

    def make(value: int | None) -> int | None:
        calls.append("made")
        return value

    assert memo.get_or_make("none", lambda: make(None)) is None
    assert memo.get_or_make("none", lambda: make(5)) is None  # None is a kept value
    assert calls == ["made"]

    def fail() -> int:
        raise ValueError("broken")

    with pytest.raises(ValueError):
        memo.get_or_make("bad", fail)
    assert memo.get_or_make("bad", lambda: 7) == 7  # a failure was not kept


def square(number: int) -> int:
    return number * number


def test_threads_share_one_memo_within_its_bound() -> None:
    memo: BoundedMemo[int, int] = BoundedMemo(50)

    def work(offset: int) -> None:
        for i in range(2_000):
            key = (i * 7 + offset) % 120
            assert memo.get_or_make(key, partial(square, key)) == key * key

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(memo) <= 50
    memo.clear()
    assert len(memo) == 0 and memo.get(0) is None
