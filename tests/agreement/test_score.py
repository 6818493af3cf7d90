"""Scoring proposals against later maintainer commits, and linked changes against replays."""

from __future__ import annotations

from bot.agreement.links import BenchmarkPR, Linker
from bot.agreement.proposals import LOOSE, History, Replay, score_proposals
from bot.agreement.score import score_links, totals
from bot.backtest.model import EditRow, HeldSetting, PRRow
from bot.rules import default_rules

from .conftest import DAY, RECIPE, TAXONOMY, commit, digest

MI300X = "variants.mxfp8.hardware_overrides.mi300x"
PROFILE = "strategy_overrides.single_node_tp.hardware_overrides.mi300x"


def _row(number: int, *edits: EditRow, **extra: object) -> PRRow:
    base = PRRow(number, "sha", "base", "2026-07-01", f"PR {number}", "r", "alignment PR", "")
    return PRRow(**{**base.__dict__, "edits": edits, **extra})  # type: ignore[arg-type]


def _env(node: str, name: str, value: str) -> EditRow:
    return EditRow(RECIPE, "env-new", name, f"{node}.extra_env.{name}", None, value)


def _replay(row: PRRow, day: int, position: int) -> Replay:
    return Replay(row, f"r{position}", day * DAY, position)


def _with_env(scope: str, env: dict[str, str]) -> dict[str, object]:
    node: dict[str, object] = {"extra_env": env}
    for part in reversed(scope.split(".")):
        node = {part: node}
    return node


def test_each_proposal_is_looked_up_in_the_commits_after_its_replay() -> None:
    rules = default_rules()
    row = _row(
        1951,
        _env(MI300X, "VLLM_ROCM_USE_AITER", "1"),  # maintainers: this node, this value
        _env(PROFILE, "TORCH_BLAS_PREFER_HIPBLASLT", "1"),  # maintainers: variant x GPU
        _env(MI300X, "VLLM_ROCM_USE_AITER_MHA", "1"),  # maintainers: another value
        _env(MI300X, "NEVER", "1"),
    )
    before = commit("b", 9, {}, _with_env(MI300X, {"NEVER": "1"}))  # before the replay
    after = commit(
        "a", 13, {},
        _with_env(MI300X, {"VLLM_ROCM_USE_AITER": "1", "TORCH_BLAS_PREFER_HIPBLASLT": "1",
                           "VLLM_ROCM_USE_AITER_MHA": "0"}),
    )  # fmt: skip
    positions = {"b": 1, "a": 5}
    history = History([before, after], positions, 40 * DAY)
    found = score_proposals([_replay(row, 10, 3)], history, rules, TAXONOMY, LOOSE)
    outcome = {p.edit.subject: p.outcome for p in found}
    assert outcome == {
        "VLLM_ROCM_USE_AITER": "same node",
        "TORCH_BLAS_PREFER_HIPBLASLT": "same value elsewhere",
        "VLLM_ROCM_USE_AITER_MHA": "different value",
        "NEVER": "not adopted",  # the earlier commit is not an adoption
    }
    placement = {p.edit.subject: p.placement for p in found}
    assert placement["VLLM_ROCM_USE_AITER"] == "variant × GPU"
    assert placement["TORCH_BLAS_PREFER_HIPBLASLT"] == "strategy × GPU"
    result = totals(found, [])
    assert (result.scored, result.adopted_same_node, result.adopted_any_node) == (4, 1, 2)


def test_an_edit_proposed_by_two_prs_counts_once_and_recent_ones_are_not_scored() -> None:
    rules = default_rules()
    edit = _env(MI300X, "X", "1")
    early, late = _row(1, edit), _row(2, edit)
    recent = _row(3, _env(MI300X, "Y", "1"))
    found = score_proposals(
        [_replay(late, 20, 4), _replay(early, 10, 2), _replay(recent, 38, 6)],
        History([], {}, 40 * DAY),
        rules,
        TAXONOMY,
    )
    by_subject = {p.edit.subject: p for p in found}
    assert by_subject["X"].prs == (1, 2)
    assert by_subject["X"].moment == 10 * DAY
    assert by_subject["Y"].outcome == "too recent"
    assert totals(found, []).scored == 1


def test_a_linked_change_is_scored_against_the_replay_before_it_and_says_why_it_was_missed() -> (
    None
):
    rules = default_rules()
    lane = digest(
        "mi300x",
        {"VLLM_ROCM_USE_AITER": "1", "NCCL_MIN_NCHANNELS": "112"},
        {"--linear-backend": "emulation"},
    )
    pr = BenchmarkPR(1951, "tune", 9 * DAY, 12 * DAY, (lane,))
    change = commit(
        "c", 13, {},
        _with_env(MI300X, {"VLLM_ROCM_USE_AITER": "1", "NCCL_MIN_NCHANNELS": "112",
                           "OWN_ADDITION": "1"}),
    )  # fmt: skip
    [link] = Linker([pr], TAXONOMY).links(change)
    held = HeldSetting(RECIPE, "tuning", "env", "NCCL_MIN_NCHANNELS", "112", "collective tuning")
    row = _row(1951, _env(MI300X, "VLLM_ROCM_USE_AITER", "1"), launches=(lane,), held=(held,))
    [scored] = score_links([link], {(1951, "c"): _replay(row, 12, 4)}, rules, TAXONOMY)
    verdicts = {v.leaf.subject: (v.status, v.why) for v in scored.leaves}
    assert verdicts["VLLM_ROCM_USE_AITER"] == ("same node", f"{MI300X}.extra_env")
    assert verdicts["NCCL_MIN_NCHANNELS"][0] == "missed"
    assert verdicts["NCCL_MIN_NCHANNELS"][1].startswith("kept out (tuning)")
    assert verdicts["OWN_ADDITION"] == (
        "missed",
        "not in the benchmark's launch (the maintainers' own addition)",
    )
    assert totals([], [scored]).linked_leaves["same node"] == 1
