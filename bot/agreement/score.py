"""Linked maintainer changes against what the bot proposed, and the totals of a score
(issue #24; strictness: issue #31).

*Linked changes*: every launch leaf of a maintainer commit linked to a replayed PR
(:mod:`bot.agreement.links`), looked up in that PR's proposals: proposed at the same node,
proposed at another node, proposed with another value, or missed — and why (the setting is
not in the benchmark's launch, a new variant, a knob class the bot keeps out, the PR's
outcome). Strict scoring counts "another node" only when the bot's node is the same choice
(forced or opt-in) and the maintainers' node applies to the lanes the bot proposed it for. A
missed leaf may still be among the candidates the PR offers as unticked checkboxes. A
maintainer reproduction section for the lane is matched with the bot's guide sections for
the same recipe and GPU.

Proposals are scored in :mod:`bot.agreement.proposals`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from bot.agreement.links import Link
from bot.agreement.proposals import (
    ADOPTED,
    STRICT,
    Proposal,
    Replay,
    Strictness,
    edit_leaves,
    edits_of,
    knob_of,
    lanes_of,
)
from bot.agreement.recipes_history import MaintainerCommit
from bot.agreement.taxonomy import Lanes, Taxonomy, opt_in
from bot.backtest.model import EditRow, PRRow
from bot.recipes.leaves import Leaf
from bot.rules import Rules

Recall = Literal["same node", "elsewhere", "different value", "missed", "restated"]
RECALLS: tuple[Recall, ...] = ("same node", "elsewhere", "different value", "restated", "missed")
# "restated": the recipe already rendered the benchmark's value for the lane at the replay;
# the maintainers wrote it again at their node. Not a change the bot could propose, so not
# in the recall's denominator (listed, like leaves a commit only moves).
HIT: tuple[Recall, ...] = ("same node", "elsewhere")

# ------------------------------------------------------------------ linked changes


@dataclass(frozen=True)
class LeafVerdict:
    leaf: Leaf
    before: str | None
    removed: bool
    status: Recall
    why: str  # for a miss: why the bot did not propose it; else where it proposed it
    knob: str
    placement: str
    # not in the diff, but among the candidates offered as unticked checkboxes (how)
    offered: Recall | None = None


@dataclass(frozen=True)
class LinkedChange:
    link: Link
    row: PRRow | None  # the linked PR replayed just before the commit (None: not replayed)
    leaves: tuple[LeafVerdict, ...]
    moved: tuple[Leaf, ...]  # leaves the commit moved from one node to another (not new)
    reproduction: bool  # the maintainers wrote a reproduction section for the lane
    bot_section: str | None  # the bot's section for the same recipe and GPU, if any


# scalars a rendering spells as one flag: `tp: 8` is `--tensor-parallel-size 8` in the command
_SCALAR_FLAGS = {"tp": "--tensor-parallel-size"}


def _restated(leaf: Leaf, row: PRRow | None, taxonomy: Taxonomy) -> bool:
    """The replay's lanes on the leaf's GPUs launched its value and the recipe already
    rendered that subject alike; or, for an image, the recipe already rendered the leaf's
    image for them (a floating tag a new node writes again: the lanes run what they ran)."""
    if row is None or (leaf.slot == "scalar" and leaf.subject not in _SCALAR_FLAGS):
        return False
    gpus = taxonomy.gpus_of_scope(leaf.scope)
    for digest in row.launches:
        if digest.recipe != leaf.recipe or (gpus is not None and digest.hardware not in gpus):
            continue
        if leaf.slot == "image" and digest.recipe_image == leaf.value:
            lane = Lanes(
                frozenset({digest.hardware}),
                frozenset({digest.variant} - {""}),
                frozenset({digest.strategy} - {""}),
            )
            if taxonomy.covers(leaf.scope, lane):
                return True
        subject = "image" if leaf.slot == "image" else leaf.subject
        if leaf.slot == "image":
            launched = digest.image == leaf.value
        elif leaf.slot == "scalar":
            subject = _SCALAR_FLAGS[leaf.subject]
            launched = (subject, leaf.value) in digest.args
        else:
            pairs = digest.env if leaf.slot == "env" else digest.args
            launched = (leaf.subject, leaf.value) in pairs
        agreed = any(a == subject or subject.startswith(a + ".") for a in digest.agrees)
        if launched and agreed:
            return True
    return False


def _relevant(leaf: Leaf, link: Link, taxonomy: Taxonomy) -> bool:
    gpus = taxonomy.gpus_of_scope(leaf.scope)
    return gpus is None or not link.hardware or bool(gpus & set(link.hardware))


def _why_missed(
    leaf: Leaf, link: Link, row: PRRow | None, commit: MaintainerCommit, taxonomy: Taxonomy
) -> str:
    if row is None:
        return "the linked PR was not replayed (outside the window)"
    variant = leaf.scope.split(".")[1] if leaf.scope.startswith("variants.") else None
    if variant is not None and (leaf.recipe, variant) in commit.new_variants:
        proposed = any(
            e.kind == "variant" and e.recipe == leaf.recipe and e.node == f"variants.{variant}"
            for e in row.edits
        )
        if not proposed:
            return f"a new variant ({variant}): the replay proposed no variant for its checkpoint"
    if leaf.slot == "scalar":
        if leaf.subject.startswith("meta.hardware."):
            return "verification mark not proposed"
        if leaf.subject in _SCALAR_FLAGS:  # the bot proposes a TP where the lanes ran another
            return f"{leaf.subject}: the replay proposed no {leaf.subject} edit here"
        return f"{leaf.subject}: not a setting the bot carries"
    gpus = taxonomy.gpus_of_scope(leaf.scope)
    launched = [
        d for d in row.launches if d.recipe == leaf.recipe and (gpus is None or d.hardware in gpus)
    ]
    if not launched:
        return f"the replay mapped no launch of #{row.number} to this recipe and GPU"
    carried = False
    for digest in launched:
        if leaf.slot == "image":
            carried = carried or digest.image == leaf.value
        else:
            pairs = digest.env if leaf.slot == "env" else digest.args
            carried = carried or (leaf.subject, leaf.value) in pairs
    if not carried:
        subjects = {s for d in launched for s, _ in (d.env if leaf.slot == "env" else d.args)}
        if leaf.slot != "image" and leaf.subject in subjects:
            return "the benchmark launched another value"
        return "not in the benchmark's launch (the maintainers' own addition)"
    for held in row.held:
        if held.recipe == leaf.recipe and held.subject.split(".", 1)[0] in (
            leaf.subject.split(".", 1)[0],
            "image" if leaf.slot == "image" else "",
        ):
            return f"kept out ({held.knob}): {held.reason}"
    if row.outcome != "alignment PR":
        return f"replay outcome {row.outcome}: {row.reason}"
    statuses = {d.status for d in launched}
    if "represents" not in statuses:
        return (
            "launched only by points that do not represent the recipe ("
            + ", ".join(sorted(statuses))
            + ")"
        )
    return "launched and represented, but no edit planned"


def _proposed(row: PRRow | None, recipe: str, offered: bool) -> list[tuple[Leaf, EditRow]]:
    """The leaves a replay proposes for ``recipe`` in its diff (or offers as checkboxes)."""
    if row is None:
        return []
    edits = edits_of(row, offered)
    return [(leaf, e) for e in edits if e.recipe == recipe for leaf in edit_leaves(e)[0]]


def _match(
    leaf: Leaf,
    proposed: Sequence[tuple[Leaf, EditRow]],
    strictness: Strictness,
    taxonomy: Taxonomy,
) -> tuple[Recall, str]:
    """How the bot's proposals carry a maintainer leaf: at the same node, elsewhere (strict:
    the same choice, and the maintainers' node applies to the lanes the bot proposed it
    for), with another value, or not at all."""
    status: Recall = "missed"
    why = ""
    for mine, edit in proposed:
        if mine.subject != leaf.subject:
            continue
        if mine.value == leaf.value and mine.node == leaf.node:
            return "same node", mine.node
        if mine.value == leaf.value:
            lanes: Lanes = lanes_of(edit, taxonomy)
            if strictness.covering and not taxonomy.covers(leaf.scope, lanes):
                continue
            if strictness.same_choice and opt_in(leaf.scope) != opt_in(mine.scope):
                continue
            status, why = "elsewhere", mine.node
        elif status == "missed":
            status, why = "different value", f"{mine.value} at {mine.node}"
    return status, why


def score_links(
    links: Sequence[Link],
    replays: Mapping[tuple[int, str], Replay],
    rules: Rules,
    taxonomy: Taxonomy,
    strictness: Strictness = STRICT,
) -> tuple[LinkedChange, ...]:
    """Each link against the replay of its PR just before the linked commit
    (``replays[(pr, commit sha)]``)."""
    out: list[LinkedChange] = []
    for link in links:
        replay = replays.get((link.pr, link.sha))
        row = replay.row if replay is not None else None
        proposed = _proposed(row, link.recipe, offered=False)
        offered = _proposed(row, link.recipe, offered=True)
        moves = link.commit.moved(link.recipe)
        verdicts: list[LeafVerdict] = []
        moved: list[Leaf] = []
        for change in link.commit.launch_changes:
            leaf = change.leaf
            if leaf.recipe != link.recipe or not _relevant(leaf, link, taxonomy):
                continue
            if (leaf.subject, leaf.value) in moves:
                moved.append(leaf)
                continue
            status, why = _match(leaf, proposed, strictness, taxonomy)
            in_checklist: Recall | None = None
            if status not in HIT and offered:
                found, where = _match(leaf, offered, strictness, taxonomy)
                if found in HIT:
                    in_checklist = found
                    why = f"offered as a checkbox: {where}"
            if in_checklist is None and status == "missed":
                if not change.removed and _restated(leaf, row, taxonomy):
                    status = "restated"
                    why = "the recipe already rendered this value for the lane at the replay"
                else:
                    why = (
                        "removal"
                        if change.removed
                        else _why_missed(leaf, link, row, link.commit, taxonomy)
                    )
            verdicts.append(
                LeafVerdict(
                    leaf,
                    change.before,
                    change.removed,
                    status,
                    why,
                    knob_of(rules, leaf),
                    taxonomy.placement(leaf.scope),
                    in_checklist,
                )
            )
        reproduction = any(e.kind.startswith("guide") for e in link.evidence) or _reproduction_text(
            link
        )
        section = None
        if row is not None:
            for guide in row.guide:
                if guide.recipe == link.recipe and (
                    not link.hardware or guide.hardware in link.hardware
                ):
                    section = guide.block
                    break
        out.append(LinkedChange(link, row, tuple(verdicts), tuple(moved), reproduction, section))
    return tuple(out)


def _reproduction_text(link: Link) -> bool:
    """Did the commit add guide text that reproduces a benchmark for the link's recipe?"""
    for addition in link.commit.guide:
        if addition.recipe != link.recipe:
            continue
        text = addition.text.lower()
        if ("inferencex" in text or "benchmark" in text) and (
            "vllm serve" in text or "export " in text or "reproduc" in text
        ):
            return True
    return False


# ------------------------------------------------------------------ totals


@dataclass(frozen=True)
class Totals:
    proposals: Counter[str]  # outcome → distinct edits
    scored: int  # proposals with enough history after them
    adopted_same_node: int
    adopted_any_node: int
    linked_leaves: Counter[str]  # recall status → leaves
    reproduction_wanted: int
    reproduction_written: int
    linked_in_checklist: int = 0  # linked leaves not in the diff, offered as checkboxes

    @property
    def linked_hit(self) -> int:
        """Linked leaves the diff proposes (at the same node, or elsewhere)."""
        return sum(self.linked_leaves[status] for status in HIT)

    @property
    def same_node_rate(self) -> float:
        return self.adopted_same_node / self.scored if self.scored else 0.0

    @property
    def any_node_rate(self) -> float:
        return self.adopted_any_node / self.scored if self.scored else 0.0

    @property
    def leaves_total(self) -> int:
        """Leaves the bot could have proposed: restated ones are listed, not counted."""
        return sum(n for status, n in self.linked_leaves.items() if status != "restated")

    @property
    def recall_any(self) -> float:
        return self.linked_hit / self.leaves_total if self.leaves_total else 0.0

    @property
    def recall_with_checklist(self) -> float:
        hit = self.linked_hit + self.linked_in_checklist
        return hit / self.leaves_total if self.leaves_total else 0.0

    @property
    def recall_same_node(self) -> float:
        return self.linked_leaves["same node"] / self.leaves_total if self.leaves_total else 0.0

    @property
    def reproduction_rate(self) -> float:
        wanted = self.reproduction_wanted
        return self.reproduction_written / wanted if wanted else 0.0


def totals(proposals: Sequence[Proposal], linked: Sequence[LinkedChange]) -> Totals:
    outcomes: Counter[str] = Counter(p.outcome for p in proposals)
    scored = sum(n for o, n in outcomes.items() if o != "too recent")
    same = outcomes["same node"]
    elsewhere = sum(outcomes[o] for o in ADOPTED) - same
    # a maintainer change linked to several PRs (a lane split in two, reapplied) counts once:
    # each of its leaves takes the best status any of its PRs' replays earned
    rank: dict[str, int] = {status: index for index, status in enumerate(RECALLS)}
    best: dict[tuple[str, tuple[str, str, str]], str] = {}
    offered: set[tuple[str, tuple[str, str, str]]] = set()
    for change in linked:
        for verdict in change.leaves:
            leaf_key = (change.link.sha, verdict.leaf.key)
            known = best.get(leaf_key)
            if known is None or rank[verdict.status] < rank[known]:
                best[leaf_key] = verdict.status
            if verdict.offered is not None:
                offered.add(leaf_key)
    recall: Counter[str] = Counter(best.values())
    checklist = sum(1 for key in offered if best[key] not in HIT)
    # one reproduction section the maintainers wrote is one (commit, recipe)
    lanes: dict[tuple[str, str], bool] = {}
    for change in linked:
        if change.reproduction and change.row is not None:
            lane = (change.link.sha, change.link.recipe)
            lanes[lane] = lanes.get(lane, False) or change.bot_section is not None
    return Totals(
        outcomes,
        scored,
        same,
        same + elsewhere,
        recall,
        len(lanes),
        sum(1 for written in lanes.values() if written),
        checklist,
    )


def breakdown(proposals: Sequence[Proposal], by: str) -> dict[str, Counter[str]]:
    """Outcome counts per knob class, edit kind, model or placement."""
    out: dict[str, Counter[str]] = {}
    for proposal in proposals:
        if by == "knob":
            name = proposal.knob
        elif by == "kind":
            name = proposal.edit.kind
        elif by == "model":
            name = proposal.edit.recipe.rsplit("/", 1)[-1].removesuffix(".yaml")
        else:
            name = proposal.placement
        out.setdefault(name, Counter())[proposal.outcome] += 1
    return dict(sorted(out.items()))
