"""Normalising and diffing never raise, whatever the tokens (hypothesis)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.rules import load_rules
from bot.vllm.catalogue import FLAGS
from bot.vllm.diff import diff_launch
from bot.vllm.diff_report import LaunchSide
from bot.vllm.normalise import normalise

SPELLINGS = sorted({spec.long for spec in FLAGS} | {a.text for spec in FLAGS for a in spec.aliases})
PIECES = st.sampled_from(
    [
        *SPELLINGS,
        "vllm", "serve", "--model", "--config", "c.yaml", "-O", "-O3", "-O.mode", "-cc.mode",
        "--compilation-config.cudagraph_mode", "-sc.method", "--hf-overrides.x", "-cc.a+",
        "--no-enable-prefix-caching", "--disable-prefix-caching", "--", "-", "=", "3", "-1",
        "-0.5", "1k", "16K", "true", "True", "{", "}", '{"mode": 3}', "[1,2]", "[" * 3000,
        "$PORT", "a=b", "--max-num-se", "--max-num", "NAME=1",
    ]
)  # fmt: skip
TOKENS = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=14)
VERSIONS = st.sampled_from(
    [(0, 8, 0), (0, 12, 0), (0, 17, 0), (0, 20, 0), (0, 27, 1), (0, 30, 0), (0, 33, 0), (0, 40, 0)]
)
CONFIGS = st.one_of(
    st.none(),
    st.dictionaries(
        st.just("c.yaml"), st.one_of(st.text(max_size=30), st.just("a: [1, {b: c}]\nd: false\n"))
    ),
)


@settings(max_examples=400, deadline=None, database=None)
@given(tokens=TOKENS, version=VERSIONS, configs=CONFIGS)
def test_normalise_never_raises(
    tokens: list[str], version: tuple[int, int, int], configs: dict[str, str] | None
) -> None:
    config = normalise(tokens, version=version, config_files=configs)
    assert all(f.severity in ("error", "hazard", "note") for f in config.findings)
    assert len({s.key for s in config.settings}) == len(config.settings)


@settings(max_examples=200, deadline=None, database=None)
@given(tokens=TOKENS)
def test_normalise_is_deterministic(tokens: list[str]) -> None:
    assert normalise(tokens) == normalise(tokens)


RULES = load_rules(Path(__file__).resolve().parents[2] / "rules")


@settings(max_examples=150, deadline=None, database=None)
@given(
    bench=TOKENS,
    recipe=TOKENS,
    hardware=st.sampled_from([None, "mi355x", "h200", "xeon6", "trillium", "no-such-gpu"]),
    env=st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
    image=st.one_of(st.none(), st.text(max_size=24)),
    version=st.one_of(st.none(), st.sampled_from(["0.12", "0.20.0", "0.33.0", "nightly", "junk"])),
)
def test_diff_never_raises(
    bench: list[str],
    recipe: list[str],
    hardware: str | None,
    env: dict[str, str],
    image: str | None,
    version: str | None,
) -> None:
    report = diff_launch(
        LaunchSide(tuple(bench), env, image),
        LaunchSide(tuple(recipe), {}, None),
        hardware=hardware,
        rules=RULES,
        version=version,
    )
    assert json.dumps(report.to_json(), default=str)


def test_a_superscript_digit_is_a_value_not_a_number() -> None:
    """Found by the property above: ``"¹".isdigit()`` is true and ``int("¹")`` fails."""
    assert normalise(["-cc.mode", "¹"]) == normalise(["-cc.mode", "¹"])
