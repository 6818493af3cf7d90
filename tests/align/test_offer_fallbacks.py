"""Offers given up (bot/align/demands/model.py: Collected.give_up_offers) fall back in the
order they were offered: the plan's outputs do not depend on the process's string hashing."""

from __future__ import annotations

from bot.align.demands.model import Collected
from bot.align.model import Setting


def test_offers_given_up_fall_back_in_the_order_they_were_offered() -> None:
    """InferenceX #2224's plan listed `--max-num-seqs` before or after
    `--max-cudagraph-capture-size` depending on PYTHONHASHSEED: the subjects came as a set."""
    out = Collected()
    names = [f"--knob-{n}" for n in range(24)]
    for name in names:
        out.offer_only[name] = ("tuning", "why")
        out.offer_fallback[name] = [Setting("tuning", "flag", name, f"{name} 1", None, "x", "t")]
    out.give_up_offers(set(reversed(names[::2])))
    assert [s.subject for s in out.settings] == names[::2]
    assert list(out.offer_only) == names[1::2]  # the others stay offered
