"""Why a point does not stand for its recipe's profile, in a reviewer's words."""

from __future__ import annotations

from bot.align.run import _parallelism_words
from bot.vllm import FlagDiff, Verdict


def _diff(key: str, flag: str, bench: object, recipe: object, *tokens: tuple[str, ...]) -> FlagDiff:
    bench_tokens, recipe_tokens = tokens
    return FlagDiff(
        "flag",
        key,
        flag,
        Verdict.DIFFERS,
        bench,
        recipe,
        bench_tokens,
        recipe_tokens,
        "",
        "topology",
    )


def test_another_parallelism_is_worded_as_spelled_never_as_none_or_true() -> None:
    """InferenceX #2590's DEP eval row read "--enable-expert-parallel None (recipe True)"."""
    tp = _diff(
        "parallel.tensor_parallel_size", "--tensor-parallel-size", 4, 8,
        ("--tensor-parallel-size", "4"), ("--tensor-parallel-size", "8"),
    )  # fmt: skip
    assert _parallelism_words(tp) == "--tensor-parallel-size 4 (recipe 8)"
    ep = _diff(
        "parallel.enable_expert_parallel", "--enable-expert-parallel", None, True,
        (), ("--enable-expert-parallel",),
    )  # fmt: skip
    words = _parallelism_words(ep)
    assert words == "no --enable-expert-parallel (recipe --enable-expert-parallel)"
    dp = _diff(
        "parallel.data_parallel_size", "--data-parallel-size", 8, None,
        ("-dp", "8"), (),
    )  # fmt: skip
    assert _parallelism_words(dp) == "-dp 8 (not in the recipe)"
