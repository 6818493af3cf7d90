"""Score proposals against what maintainers did, and linked maintainer changes against what
the bot proposed (issue #24).

*Proposals*: every distinct YAML edit the replayed PRs would open, as leaves
(:mod:`bot.agreement.leaves`), looked up in the maintainer commits that came after the replay
point: adopted at the same node, with the same value at another node, with a different
value, partly (some leaves adopted, others not), not adopted, or too recent to tell (fewer
than :data:`MIN_HISTORY` of history after the replay).

*Linked changes*: every launch leaf of a maintainer commit linked to a replayed PR
(:mod:`bot.agreement.links`), looked up in that PR's proposals: proposed at the same node,
proposed at another node, proposed with another value, or missed — and why (the setting is
not in the benchmark's launch, a new variant, a knob class the bot keeps out, the PR's
outcome). A maintainer reproduction section for the lane is matched with the bot's guide
sections for the same recipe and GPU.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.agreement.leaves import Leaf, image_value
from bot.agreement.links import Link
from bot.agreement.recipes_history import MaintainerCommit
from bot.agreement.taxonomy import Taxonomy
from bot.backtest.model import EditRow, PRRow
from bot.rules import Rules
from bot.vllm.pairs import canonical_value, flag_pairs

DAY = 86400
MIN_HISTORY = 5 * DAY

Adoption = Literal[
    "same node",
    "same value elsewhere",
    "different value",
    "partly",
    "not adopted",
    "too recent",
]
ADOPTIONS: tuple[Adoption, ...] = (
    "same node",
    "same value elsewhere",
    "different value",
    "partly",
    "not adopted",
    "too recent",
)
Recall = Literal["same node", "elsewhere", "different value", "missed", "restated"]
RECALLS: tuple[Recall, ...] = ("same node", "elsewhere", "different value", "restated", "missed")
# "restated": the recipe already rendered the benchmark's value for the lane at the replay;
# the maintainers wrote it again at their node. Not a change the bot could propose, so not
# in the recall's denominator (listed, like leaves a commit only moves).


@dataclass(frozen=True)
class Replay:
    """Where one PR was replayed: its row, the recipes commit and the moment."""

    row: PRRow
    recipes_sha: str
    moment: int
    position: int  # index of the recipes commit in the first-parent history (-1: unknown)


# ------------------------------------------------------------------ edits as leaves


def _container(node: str) -> str:
    """``a.extra_args[3]`` → ``a.extra_args``; ``a.extra_env.X`` → ``a.extra_env``."""
    head = node.split("[", 1)[0]
    for key in (".extra_env.", ".base_env.", ".env."):
        if key in head:
            return head.split(key, 1)[0] + key[:-1]
    return head


def _tokens(text: str) -> list[str]:
    """An edit's value as args tokens: a JSON list, or ``--flag value`` (the value may be
    JSON with no spaces), or a bare value."""
    text = text.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(v) for v in parsed]
    if text.startswith("--"):
        flag, _, rest = text.partition(" ")
        return [flag, rest] if rest else [flag]
    return [text]


def edit_leaves(edit: EditRow) -> tuple[tuple[Leaf, ...], bool]:
    """(the leaves an edit sets, whether it removes them)."""
    node, recipe = edit.node, edit.recipe
    if edit.kind in ("env", "env-new"):
        container = _container(node)
        name = node[len(container) + 1 :] if node.startswith(container + ".") else edit.subject
        value = edit.after if edit.after is not None else edit.before
        leaf = Leaf(recipe, container, "env", name, canonical_value(value))
        return (leaf,), edit.after is None
    if edit.kind == "image":
        return (Leaf(recipe, node, "image", "image", image_value(edit.after or "")),), False
    if edit.kind == "variant":  # a new variant is adopted when its checkpoint is
        model = Leaf(recipe, f"{node}.model_id", "scalar", "model_id", canonical_value(edit.after))
        return (model,), False
    if edit.kind in ("verified", "tp"):
        subject = node if node.startswith("meta.hardware.") else "tp"
        return (Leaf(recipe, node, "scalar", subject, canonical_value(edit.after)),), False
    container = _container(node)
    if container.rpartition(".")[2] not in ("args", "extra_args", "base_args", "vllm_args"):
        return (Leaf(recipe, node, "scalar", edit.subject, canonical_value(edit.after)),), False
    removed = edit.after is None
    text = edit.before if removed else edit.after
    if text is None:
        return (), removed
    tokens = _tokens(text)
    if node.endswith("]") and not tokens[0].startswith("--"):
        tokens = [edit.subject, *tokens]  # a value set in place: its flag is the subject
    after = dict(flag_pairs(tokens))
    before = dict(flag_pairs(_tokens(edit.before))) if edit.before and not removed else {}
    subject = edit.subject.split(".", 1)[0]
    leaves = tuple(
        Leaf(recipe, container, "arg", flag, value)
        for flag, value in after.items()
        if before.get(flag) != value and (flag.split(".", 1)[0] == subject or len(after) == 1)
    )
    return leaves, removed


# ------------------------------------------------------------------ proposals


@dataclass(frozen=True)
class Adopted:
    """A maintainer commit's leaf that matches a proposed leaf."""

    how: Adoption
    commit: MaintainerCommit = field(repr=False)
    leaf: Leaf


@dataclass(frozen=True)
class Proposal:
    """One distinct YAML edit, with every PR that proposed it."""

    edit: EditRow
    leaves: tuple[Leaf, ...]
    removes: bool
    prs: tuple[int, ...]
    moment: int  # the earliest replay that proposed it
    knob: str
    placement: str
    outcome: Adoption
    matches: tuple[Adopted, ...]

    @property
    def adopted(self) -> bool:
        return self.outcome in ("same node", "same value elsewhere")


def _later(
    commits: Sequence[MaintainerCommit], positions: Mapping[str, int], replay: Replay
) -> list[MaintainerCommit]:
    """Maintainer commits after the replayed recipes commit (by history order; by time when
    the position is unknown)."""
    if replay.position >= 0:
        return [c for c in commits if positions.get(c.sha, -1) > replay.position]
    return [c for c in commits if c.time > replay.moment]


def _adoption(
    leaf: Leaf, removes: bool, later: Iterable[MaintainerCommit]
) -> tuple[Adoption, Adopted | None]:
    best: tuple[Adoption, Adopted | None] = ("not adopted", None)
    rank = {a: i for i, a in enumerate(ADOPTIONS)}
    for commit in later:
        # a new variant's checkpoint is metadata to the launch filter, yet it is what the
        # variant serves: its adoption is read from every leaf the commit changed
        for change in commit.launch_changes if leaf.launch else commit.changes:
            other = change.leaf
            if other.recipe != leaf.recipe or other.subject != leaf.subject:
                continue
            if change.removed != removes:
                continue
            if removes:
                how: Adoption = "same node" if other.node == leaf.node else "same value elsewhere"
            elif other.value == leaf.value:
                how = "same node" if other.node == leaf.node else "same value elsewhere"
            else:
                how = "different value"
            if rank[how] < rank[best[0]]:
                best = (how, Adopted(how, commit, other))
            if how == "same node":
                return best
    return best


def _combine(outcomes: Sequence[Adoption]) -> Adoption:
    if not outcomes:
        return "not adopted"
    if all(o == "same node" for o in outcomes):
        return "same node"
    if all(o in ("same node", "same value elsewhere") for o in outcomes):
        return "same value elsewhere"
    if any(o in ("same node", "same value elsewhere") for o in outcomes):
        return "partly"
    if any(o == "different value" for o in outcomes):
        return "different value"
    return "not adopted"


def knob_of(rules: Rules, leaf: Leaf) -> str:
    if leaf.slot == "image":
        return "image"
    if leaf.slot == "scalar":
        return "verification" if leaf.subject.startswith("meta.hardware.") else "structure"
    return str(rules.knob_class("env" if leaf.slot == "env" else "flag", leaf.subject))


def score_proposals(
    replays: Sequence[Replay],
    commits: Sequence[MaintainerCommit],
    positions: Mapping[str, int],
    history_end: int,
    rules: Rules,
    taxonomy: Taxonomy,
) -> tuple[Proposal, ...]:
    first: dict[tuple[str, str, str, str | None], tuple[EditRow, list[int], Replay]] = {}
    for replay in replays:
        if replay.row.outcome != "alignment PR":
            continue
        for edit in replay.row.edits:
            key = (edit.recipe, edit.node, edit.subject, edit.after)
            if key not in first:
                first[key] = (edit, [replay.row.number], replay)
            else:
                found = first[key]
                found[1].append(replay.row.number)
                if replay.moment < found[2].moment:
                    first[key] = (found[0], found[1], replay)
    proposals: list[Proposal] = []
    for edit, prs, replay in first.values():
        leaves, removes = edit_leaves(edit)
        knob = knob_of(rules, leaves[0]) if leaves else "structure"
        placement = taxonomy.placement(leaves[0].scope) if leaves else "other"
        if history_end - replay.moment < MIN_HISTORY:
            outcome: Adoption = "too recent"
            matches: tuple[Adopted, ...] = ()
        else:
            later = _later(commits, positions, replay)
            adoptions = [_adoption(leaf, removes, later) for leaf in leaves]
            outcome = _combine([how for how, _ in adoptions])
            matches = tuple(m for _, m in adoptions if m is not None)
        proposals.append(
            Proposal(
                edit,
                leaves,
                removes,
                tuple(sorted(set(prs))),
                replay.moment,
                knob,
                placement,
                outcome,
                matches,
            )
        )
    return tuple(proposals)


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


@dataclass(frozen=True)
class LinkedChange:
    link: Link
    row: PRRow | None  # the linked PR replayed just before the commit (None: not replayed)
    leaves: tuple[LeafVerdict, ...]
    moved: tuple[Leaf, ...]  # leaves the commit moved from one node to another (not new)
    reproduction: bool  # the maintainers wrote a reproduction section for the lane
    bot_section: str | None  # the bot's section for the same recipe and GPU, if any


def _restated(leaf: Leaf, row: PRRow | None, taxonomy: Taxonomy) -> bool:
    """The replay's lanes on the leaf's GPUs launched its value and the recipe already
    rendered that subject alike."""
    if row is None or leaf.slot == "scalar":
        return False
    gpus = taxonomy.gpus_of_scope(leaf.scope)
    for digest in row.launches:
        if digest.recipe != leaf.recipe or (gpus is not None and digest.hardware not in gpus):
            continue
        subject = "image" if leaf.slot == "image" else leaf.subject
        if leaf.slot == "image":
            launched = digest.image == leaf.value
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


def score_links(
    links: Sequence[Link],
    replays: Mapping[tuple[int, str], Replay],
    rules: Rules,
    taxonomy: Taxonomy,
) -> tuple[LinkedChange, ...]:
    """Each link against the replay of its PR just before the linked commit
    (``replays[(pr, commit sha)]``)."""
    out: list[LinkedChange] = []
    for link in links:
        replay = replays.get((link.pr, link.sha))
        row = replay.row if replay is not None else None
        proposed: list[Leaf] = []
        if row is not None and row.outcome == "alignment PR":
            for edit in row.edits:
                if edit.recipe == link.recipe:
                    proposed.extend(edit_leaves(edit)[0])
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
            status: Recall = "missed"
            why = ""
            for mine in proposed:
                if mine.subject != leaf.subject:
                    continue
                if mine.value == leaf.value and mine.node == leaf.node:
                    status, why = "same node", mine.node
                    break
                if mine.value == leaf.value:
                    status, why = "elsewhere", mine.node
                elif status == "missed":
                    status, why = "different value", f"{mine.value} at {mine.node}"
            if status == "missed" and not change.removed and _restated(leaf, row, taxonomy):
                status = "restated"
                why = "the recipe already rendered this value for the lane at the replay"
            elif status == "missed":
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
                )
            )
        reproduction = any(e.kind.startswith("guide") for e in link.evidence) or _reproduction_text(
            link
        )
        section = None
        if row is not None:
            for guide in row.guide:
                hardware = guide.block.split(".")[1] if guide.block.count(".") >= 2 else ""
                if guide.recipe == link.recipe and (not link.hardware or hardware in link.hardware):
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
        hit = self.linked_leaves["same node"] + self.linked_leaves["elsewhere"]
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
    # a maintainer change linked to several PRs (a lane split in two, reapplied) counts once:
    # each of its leaves takes the best status any of its PRs' replays earned
    rank: dict[str, int] = {status: index for index, status in enumerate(RECALLS)}
    best: dict[tuple[str, tuple[str, str, str]], str] = {}
    for change in linked:
        for verdict in change.leaves:
            leaf_key = (change.link.sha, verdict.leaf.key)
            known = best.get(leaf_key)
            if known is None or rank[verdict.status] < rank[known]:
                best[leaf_key] = verdict.status
    recall: Counter[str] = Counter(best.values())
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
        same + outcomes["same value elsewhere"],
        recall,
        len(lanes),
        sum(1 for written in lanes.values() if written),
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
