"""Each YAML edit the replayed PRs propose, looked up in what maintainers did afterwards.

Every distinct edit becomes the leaves it changes (:mod:`bot.recipes.leaves`) and is looked
up in the maintainer commits after its replay: adopted at the same node, with the same value at
another node, with a different value, partly (some leaves adopted, others not), not adopted,
or too recent to tell (fewer than :data:`MIN_HISTORY` of history after the replay).

*Strict* scoring (the default, :data:`STRICT`) counts an adoption only when

- the commit is linked to one of the PRs that proposed the edit (:mod:`bot.agreement.links`)
  and lands within :data:`~bot.agreement.links.WINDOW` after that PR's merge ("unlinked"
  otherwise);
- the leaf is one the edit changes: a field the recipe already rendered for the edit's lanes
  (restated inside a JSON-valued flag, say) is not a leaf of the edit;
- at another node, the maintainers' node applies to the edit's lanes: its renderings include
  a benchmarked GPU, variant and strategy ("not covering" otherwise);
- it is the same choice: a forced setting and an opt-in feature block are not the same
  ("other choice").

:data:`LOOSE` is the first scorer's reading (any later commit, any node, every leaf), kept for
comparison.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from bot.agreement.links import WINDOW, Link
from bot.agreement.recipes_history import MaintainerCommit
from bot.agreement.taxonomy import Lanes, Taxonomy, opt_in
from bot.backtest.model import EditRow, PRRow
from bot.recipes.leaves import Leaf, image_value
from bot.rules import Rules
from bot.vllm.pairs import canonical_value, flag_pairs

DAY = 86400
MIN_HISTORY = 5 * DAY

Adoption = Literal[
    "same node",
    "same value elsewhere",
    "different value",
    "partly",
    "other choice",
    "not covering",
    "unlinked",
    "not adopted",
    "too recent",
]
# best first: a leaf takes the best outcome any commit gives it
ADOPTIONS: tuple[Adoption, ...] = (
    "same node",
    "same value elsewhere",
    "different value",
    "partly",
    "other choice",  # the same value, but opt-in where the edit forces it (or the reverse)
    "not covering",  # the same value at a node whose renderings exclude the edit's lanes
    "unlinked",  # adopted by a commit not linked to a proposing PR (or too late)
    "not adopted",
    "too recent",
)
ADOPTED: tuple[Adoption, ...] = ("same node", "same value elsewhere")
RANK = {outcome: index for index, outcome in enumerate(ADOPTIONS)}


@dataclass(frozen=True)
class Strictness:
    """Which strict rules a score applies (the module docstring)."""

    linked: bool
    changed_only: bool
    covering: bool
    same_choice: bool

    @property
    def name(self) -> str:
        return "strict" if self == STRICT else "loose" if self == LOOSE else "custom"


STRICT = Strictness(linked=True, changed_only=True, covering=True, same_choice=True)
LOOSE = Strictness(linked=False, changed_only=False, covering=False, same_choice=False)


@dataclass(frozen=True)
class Replay:
    """Where one PR was replayed: its row, the recipes commit and the moment."""

    row: PRRow
    recipes_sha: str
    moment: int
    position: int  # index of the recipes commit in the first-parent history (-1: unknown)
    merged: int = 0  # when the PR merged (0: unknown, the replay moment stands in)

    @property
    def merge_time(self) -> int:
        return self.merged or self.moment


RecipeLeaves = Mapping[tuple[str, str, str], Leaf]


@dataclass(frozen=True)
class History:
    """What the recipes history says, for scoring proposals."""

    commits: Sequence[MaintainerCommit]  # maintainer commits, oldest first
    positions: Mapping[str, int]  # sha → index in the first-parent history
    end: int  # time of the last commit
    links: Sequence[Link] = ()
    # (recipes sha, recipe) → the recipe's leaves at that commit, for the replays' recipes
    existing: Mapping[tuple[str, str], RecipeLeaves] = field(default_factory=dict)


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


def lanes_of(edit: EditRow, taxonomy: Taxonomy) -> Lanes:
    """The lanes an edit is for: its plan's targets, or (a row recorded without them) what its
    node names. A new variant's own name is not a lane constraint: maintainers may name the
    variant for the same checkpoint otherwise."""
    scope = edit.node if edit.kind == "variant" else _container(edit.node).rpartition(".")[0]
    named = taxonomy.gpus_of_scope(scope)
    hardware = frozenset(edit.hardware) or (named or frozenset())
    variants = frozenset(edit.variants) or frozenset(_after(scope, "variants"))
    strategies = frozenset(edit.strategies) or frozenset(_after(scope, "strategy_overrides"))
    if edit.kind == "variant":
        variants = frozenset()
    return Lanes(hardware, variants, strategies)


def _after(scope: str, key: str) -> tuple[str, ...]:
    parts = scope.split(".")
    return tuple(parts[i + 1] for i, part in enumerate(parts[:-1]) if part == key)[:1]


def restated(leaf: Leaf, lanes: Lanes, recipe: RecipeLeaves | None, taxonomy: Taxonomy) -> bool:
    """Did the recipe already render ``leaf``'s value for the edit's lanes from another node
    (every forced node covering the lanes that sets the subject sets this value)? Then the
    edit restates it (inside a JSON-valued flag written whole at a narrower node, say): it
    is not a leaf the edit changes."""
    if recipe is None or leaf.slot == "scalar":
        return False
    found = False
    for other in recipe.values():
        if other.subject != leaf.subject or other.slot != leaf.slot or opt_in(other.scope):
            continue
        if not taxonomy.covers(other.scope, lanes):
            continue
        if other.value != leaf.value:
            return False  # the lanes rendered another value somewhere: the edit changes it
        found = found or other.node != leaf.node
    return found


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
    leaves: tuple[Leaf, ...]  # the leaves it changes (strict: without restated ones)
    removes: bool
    prs: tuple[int, ...]
    moment: int  # the earliest replay that proposed it
    knob: str
    placement: str
    outcome: Adoption
    matches: tuple[Adopted, ...]
    restated: tuple[Leaf, ...] = ()  # leaves the recipe already rendered (not scored)

    @property
    def adopted(self) -> bool:
        return self.outcome in ADOPTED


def edits_of(row: PRRow, offered: bool) -> tuple[EditRow, ...]:
    """The edits a replay's alignment PR puts in its diff, or (``offered``) the candidates it
    offers as unticked checkboxes."""
    if offered:
        return row.offered
    return row.edits if row.opens_pr else ()


def _later(
    commits: Sequence[MaintainerCommit], positions: Mapping[str, int], replay: Replay
) -> list[MaintainerCommit]:
    """Maintainer commits after the replayed recipes commit (by history order; by time when
    the position is unknown)."""
    if replay.position >= 0:
        return [c for c in commits if positions.get(c.sha, -1) > replay.position]
    return [c for c in commits if c.time > replay.moment]


def _candidates(
    recipe: str, replays: Sequence[Replay], history: History, strictness: Strictness
) -> list[tuple[MaintainerCommit, bool]]:
    """(commit, counts): the commits after the earliest replay, and whether each may adopt
    the edit (strict: linked to a proposing PR for this recipe, after that PR's replay, and
    within the window after its merge)."""
    first = min(replays, key=lambda r: r.moment)
    later = _later(history.commits, history.positions, first)
    if not strictness.linked:
        return [(commit, True) for commit in later]
    linked: set[str] = set()
    for replay in replays:
        number = replay.row.number
        after = {c.sha for c in _later(history.commits, history.positions, replay)}
        for link in history.links:
            if (
                link.pr == number
                and link.recipe == recipe
                and link.sha in after
                and link.commit.time <= replay.merge_time + WINDOW
            ):
                linked.add(link.sha)
    return [(commit, commit.sha in linked) for commit in later]


def _how(
    leaf: Leaf,
    other: Leaf,
    removes: bool,
    lanes: Lanes,
    strictness: Strictness,
    taxonomy: Taxonomy,
) -> Adoption | None:
    """What one maintainer leaf of the same subject says of a proposed leaf (None: nothing,
    a different value at a node that is not the edit's choice or lanes)."""
    same = removes or other.value == leaf.value
    if other.node == leaf.node:
        return "same node" if same else "different value"
    if strictness.covering and not taxonomy.covers(other.scope, lanes):
        return "not covering" if same else None
    if strictness.same_choice and opt_in(other.scope) != opt_in(leaf.scope):
        return "other choice" if same else None
    return "same value elsewhere" if same else "different value"


def _adoption(
    leaf: Leaf,
    removes: bool,
    lanes: Lanes,
    candidates: Iterable[tuple[MaintainerCommit, bool]],
    strictness: Strictness,
    taxonomy: Taxonomy,
) -> tuple[Adoption, Adopted | None]:
    best: tuple[Adoption, Adopted | None] = ("not adopted", None)
    for commit, counts in candidates:
        # a new variant's checkpoint is metadata to the launch filter, yet it is what the
        # variant serves: its adoption is read from every leaf the commit changed
        for change in commit.launch_changes if leaf.launch else commit.changes:
            other = change.leaf
            if other.recipe != leaf.recipe or other.subject != leaf.subject:
                continue
            if change.removed != removes:
                continue
            how = _how(leaf, other, removes, lanes, strictness, taxonomy)
            if how is not None and not counts:
                how = "unlinked" if how in ADOPTED else None
            if how is None:
                continue
            if RANK[how] < RANK[best[0]]:
                best = (how, Adopted(how, commit, other))
            if how == "same node":
                return best
    return best


def _combine(outcomes: Sequence[Adoption]) -> Adoption:
    if not outcomes:
        return "not adopted"
    if all(o == "same node" for o in outcomes):
        return "same node"
    if all(o in ADOPTED for o in outcomes):
        return "same value elsewhere"
    if any(o in ADOPTED for o in outcomes):
        return "partly"
    return min(outcomes, key=RANK.__getitem__)


def knob_of(rules: Rules, leaf: Leaf) -> str:
    if leaf.slot == "image":
        return "image"
    if leaf.slot == "scalar":
        return "verification" if leaf.subject.startswith("meta.hardware.") else "structure"
    return str(rules.knob_class("env" if leaf.slot == "env" else "flag", leaf.subject))


def score_proposals(
    replays: Sequence[Replay],
    history: History,
    rules: Rules,
    taxonomy: Taxonomy,
    strictness: Strictness = STRICT,
    *,
    offered: bool = False,
) -> tuple[Proposal, ...]:
    """Every distinct edit of the replays' alignment PRs (``offered``: of the candidates
    they offer as unticked checkboxes), scored once at its earliest replay."""
    first: dict[tuple[str, str, str, str | None], tuple[EditRow, list[Replay]]] = {}
    for replay in replays:
        for edit in edits_of(replay.row, offered):
            key = (edit.recipe, edit.node, edit.subject, edit.after)
            first.setdefault(key, (edit, []))[1].append(replay)
    proposals: list[Proposal] = []
    for edit, proposing in first.values():
        earliest = min(proposing, key=lambda r: r.moment)
        leaves, removes = edit_leaves(edit)
        lanes = lanes_of(edit, taxonomy)
        dropped: tuple[Leaf, ...] = ()
        if strictness.changed_only and not removes:
            existing = history.existing.get((earliest.recipes_sha, edit.recipe))
            dropped = tuple(leaf for leaf in leaves if restated(leaf, lanes, existing, taxonomy))
            leaves = tuple(leaf for leaf in leaves if leaf not in dropped)
        described = leaves or dropped
        knob = knob_of(rules, described[0]) if described else "structure"
        placement = taxonomy.placement(described[0].scope) if described else "other"
        if history.end - earliest.moment < MIN_HISTORY:
            outcome: Adoption = "too recent"
            matches: tuple[Adopted, ...] = ()
        else:
            candidates = _candidates(edit.recipe, proposing, history, strictness)
            adoptions = [
                _adoption(leaf, removes, lanes, candidates, strictness, taxonomy) for leaf in leaves
            ]
            outcome = _combine([how for how, _ in adoptions])
            matches = tuple(m for _, m in adoptions if m is not None)
        proposals.append(
            Proposal(
                edit,
                leaves,
                removes,
                tuple(sorted({r.row.number for r in proposing})),
                earliest.moment,
                knob,
                placement,
                outcome,
                matches,
                dropped,
            )
        )
    return tuple(proposals)
