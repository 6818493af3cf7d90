"""Strict scoring on the real histories (the bundles in ../shared), on two July PRs: #1951
(MiniMax-M3 MXFP8 MI300X tuning, answered by recipes f91fc17 five days later at the bot's node)
and #1964 (MiniMax-M3 FP4 MI355X MTP: its AITER MoE variables reached the recipe 27 days after
its merge, in a commit answering another PR)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.agreement.links import WINDOW
from bot.agreement.proposals import ADOPTED, LOOSE, STRICT
from bot.agreement.run import Scorecard, score
from bot.backtest.run import settings_for
from tests.shared import clone_histories
from tests.ungated import ungated_rules_dir

pytestmark = pytest.mark.slow

F91FC17 = "f91fc176791337d3dc173a6ec85d8a903c69c4e7"


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return clone_histories(tmp_path_factory.mktemp("real-score"))


def _card(repos: tuple[Path, Path], cache: Path, loose: bool) -> Scorecard:
    [card] = score(
        # the scorer's mechanics: every candidate in the diff (tests.ungated)
        settings_for(*repos, rules_dir=ungated_rules_dir(repos[0].parent)),
        windows=[("2026-07-01", "2026-07-08")],
        only=(1951, 1964),
        cache=cache,
        strictness=LOOSE if loose else STRICT,
    )
    return card


def test_strict_adoptions_are_linked_changed_covering_and_the_same_choice(
    repos: tuple[Path, Path], tmp_path: Path
) -> None:
    cache = tmp_path / "cache.jsonl"
    strict, loose = _card(repos, cache, False), _card(repos, cache, True)
    by_pr = {p.prs: p for p in strict.proposals}
    tuned = [p for p in strict.proposals if p.prs == (1951,)]
    assert tuned and all(p.outcome == "same node" for p in tuned), by_pr
    assert {m.commit.sha for p in tuned for m in p.matches} == {F91FC17}
    moe = {p.edit.subject: p for p in strict.proposals if p.prs == (1964,)}
    loose_moe = {p.edit.subject: p for p in loose.proposals if p.prs == (1964,)}
    # its AITER variables the loose scorer counted (VLLM_ROCM_USE_AITER_MOE=1, vLLM's default,
    # is no candidate any more): strictly, no linked commit in the window adopted them
    aiter = [s for s, p in loose_moe.items() if "AITER" in s and p.adopted]
    assert aiter and all(moe[s].outcome in ("unlinked", "not adopted") for s in aiter), aiter
    # every strict adoption: a commit linked to a proposing PR, within the window after its
    # merge, on leaves the edit changes
    merged = {r.row.number: r.merged for r in strict.replays}
    linked = {(link.pr, link.sha, link.recipe) for link in strict.links}
    for proposal in strict.proposals:
        assert not set(proposal.leaves) & set(proposal.restated)
        if proposal.outcome not in ADOPTED:
            continue
        for match in proposal.matches:
            assert any(
                (pr, match.commit.sha, proposal.edit.recipe) in linked
                and match.commit.time <= merged[pr] + WINDOW
                for pr in proposal.prs
            ), proposal
    assert strict.totals.adopted_any_node <= loose.totals.adopted_any_node
    # each lane a replay compared records the image the recipe rendered for it, which a
    # maintainer's image at their own node may only restate
    compared = [d for r in strict.replays for d in r.row.launches if d.status == "represents"]
    assert compared and all(d.recipe_image.startswith("vllm/") for d in compared), compared
