"""``_containers``: the set lookup answers what the scan of every drawn path answered."""

from __future__ import annotations

from bot.align.demands.placement import _containers

DRAWN = frozenset(
    {
        "model.base_args[2]",
        "variants.fp8.hardware_overrides.h200.extra_args[0]",
        "strategy_overrides.tp.env.VLLM_X",
        "guide",
    }
)


def _scan(node: str, drawn: frozenset[str]) -> bool:
    return any(d.startswith((node + ".", node + "[")) for d in drawn)


def test_containers_match_the_prefix_scan() -> None:
    under = _containers(DRAWN)
    questions = {p[:i] for p in DRAWN for i in range(len(p) + 1)} | {"model.base", "x", ""}
    for node in sorted(questions):
        assert (node in under) == _scan(node, DRAWN), node
    assert "variants.fp8.hardware_overrides" in under
    assert "model.base_args[2]" not in under and "model.base" not in under
