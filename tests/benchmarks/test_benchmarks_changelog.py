from __future__ import annotations

import pytest

from bot.benchmarks.changelog import entries_for, matches, parse_changelog, vllm_prs
from bot.errors import InputError
from tests.evidence.conftest import SEED_TEMPLATE_DIR

KEY = "dsv41flash-fp4-mi355x-vllm-agentic-mtp"


def test_seed_entry() -> None:
    entries = parse_changelog((SEED_TEMPLATE_DIR / "perf-changelog.yaml").read_text())
    assert len(entries) == 1
    entry = entries[0]
    assert entry.config_keys == (KEY,)
    assert entry.description == (
        "Switch MI355X DSV4.1-Flash to --moe-backend aiter (CK a8w4 experts) on nightly-eed1f3d0c6",
        "MoE GEMM 2.72 -> 2.30 ms/step at conc 1, 4.91 -> 4.27 at conc 4, 9.06 -> 7.18 at conc 16 "
        "(whole-step gains 4.2% / 5.3% / 8.7%)",
        "AgentX conc 1: mean ITL 4.01 -> 3.91 ms, mean TTFT 681 -> 639 ms",
    )
    assert (entry.pr_link, entry.pr_number, entry.evals_only, entry.line) == (
        "https://github.com/SemiAnalysisAI/InferenceX/pull/3058",
        3058,
        False,
        1,
    )
    assert entries_for(entries, KEY, 3058) == entries
    assert entries_for(entries, KEY, 9999) == ()
    assert entries_for(entries, "other-key") == ()


@pytest.mark.parametrize(
    ("pattern", "key", "hit"),
    [
        ("dsv41flash-*-vllm-*", KEY, True),
        ("*mi355x*", KEY, True),
        ("dsv41flash", KEY, False),  # full match, not prefix
        ("dsv41flash-fp4-mi355x-vllm-agentic-mt?", KEY, False),  # ? is literal, not fnmatch
        ("foo.bar", "fooxbar", False),  # . is literal
        ("[ab]-x", "a-x", False),  # brackets are literal
        ("[ab]-x", "[ab]-x", True),
        ("*", "", True),
    ],
)
def test_key_matching_is_star_only(pattern: str, key: str, hit: bool) -> None:
    assert matches(pattern, key) is hit


def test_history_and_placeholders() -> None:
    text = """\
- config-keys: [dsv41flash-*]
  description: [older change]
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/2990

- config-keys: ["*-mi355x-*"]
  description: [new change]
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX
  evals-only: true
"""
    entries = parse_changelog(text)
    assert [e.line for e in entries] == [1, 5]
    assert [e.pr_number for e in entries] == [2990, None]
    assert entries[1].evals_only
    assert [e.description for e in entries_for(entries, KEY)] == [
        ("older change",),
        ("new change",),
    ]
    assert [e.description for e in entries_for(entries, KEY, 3058)] == [("new change",)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{a: 1}\n", "perf-changelog.yaml:1: the changelog must be a YAML list"),
        ("- 3\n", "perf-changelog.yaml:1: key '0': each changelog entry must be a mapping"),
        (
            "- config-keys: []\n  description: [x]\n  pr-link: u\n",
            "'config-keys' must be a non-empty list of strings",
        ),
        ("- config-keys: [a]\n  description: [x]\n  pr-link: [u]\n", "'pr-link' must be a string"),
        ("- [unclosed\n", "malformed YAML"),
    ],
)
def test_bad_changelogs_are_located_errors(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_changelog(text)
    assert parse_changelog("") == ()


def test_an_entry_without_pr_link_is_read() -> None:
    """main carried entries without ``pr-link`` (InferenceX, 2026-04-25, entry 204)."""
    text = (
        "- config-keys:\n    - dsv4-fp8-mi355x-sglang\n  description:\n    - Bump the time limit\n"
    )
    (entry,) = parse_changelog(text)
    assert (entry.config_keys, entry.pr_link, entry.pr_number) == (
        ("dsv4-fp8-mi355x-sglang",),
        "",
        None,
    )


def test_upstream_vllm_prs_are_read_from_the_description() -> None:
    text = """
- config-keys: [a]
  description:
    - "Pin nightly-eed1f3d0c6 for the AITER mHC pre block (vllm-project/vllm#56503)"
    - "see https://github.com/vllm-project/vllm/pull/56100, and vllm#56503 again"
    - "not sglang/vllm#3, not myvllm#4, not the PR #3058 itself"
  pr-link: https://github.com/vllm-project/vllm/pull/9
"""
    assert vllm_prs(parse_changelog(text)) == (56503, 56100)  # in order, once; pr-link is ours
    seed = parse_changelog((SEED_TEMPLATE_DIR / "perf-changelog.yaml").read_text())
    assert vllm_prs(seed) == ()
