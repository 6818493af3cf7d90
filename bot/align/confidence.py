"""How likely recipe maintainers take a candidate edit, from what they did with earlier ones.

Every candidate edit has a *kind*: its knob class (``rules/knobs.yaml``), what it changes
(a value the recipe has, a new setting, an image, a new variant, …) and the vendor of the
hardware it was benchmarked on. ``rules/practice.yaml`` (computed by ``recipe-sync score
--practice`` on a window of history, never by hand) counts, per kind, the bot's proposals
that history scored and how many maintainers adopted. The estimate is that rate shrunk
towards a sceptical prior (:class:`~bot.align.model.Estimate`: one adoption in three
proposals), so a kind seen twice is not trusted like one seen twenty times,
and a kind never seen is not proposed. Only candidates whose estimate reaches the policy's
``propose_above`` go into the diff; the rest are offered as an unticked checklist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from bot.align.model import ChangeKind, Estimate, PlannedEdit, Target, Wait, WaitReason
from bot.rules import Rules
from bot.rules.knobs import Together
from bot.rules.practice import KindPractice, PracticeRules

# kinds whose precision is their evidence, not history: a verification mark is written only
# when the cited eval passed on the launch line the edited recipe renders, and a replay of
# history has no CI runs to propose one, so history cannot score it
EVIDENCE_ONLY = frozenset({"verified"})

CHANGES = {
    "variant": "new variant",
    "image": "image",
    "tp": "parallelism",
    "verified": "verification mark",
    "flag-remove": "removal",
}


def kind_of(edit: PlannedEdit, rules: Rules, vendor: str) -> ChangeKind:
    if edit.kind in ("env", "env-new"):
        knob = str(rules.knob_class("env", edit.subject))
    elif edit.kind in ("flag", "flag-new", "flag-remove"):
        knob = str(rules.knob_class("flag", edit.subject))
    elif edit.kind == "image":
        knob = "image"
    elif edit.kind == "verified":
        knob = "verification"
    else:
        knob = "structure"
    return ChangeKind(knob, change_of(edit.kind, edit.before, edit.node), vendor)


def change_of(kind: str, before: str | None, node: str) -> str:
    """What an edit changes, in the practice file's words (the scorer counts proposals by
    the same words)."""
    if node.startswith("features."):
        return "opt-in feature"
    if kind in CHANGES:
        return CHANGES[kind]
    return "changed value" if before is not None else "new setting"


def estimate(kind: ChangeKind, practice: PracticeRules) -> Estimate:
    """The counts of the kind, else of its class and change for any vendor."""
    for key in (kind.key, f"{kind.knob}/{kind.change}/any"):
        found: KindPractice | None = practice.kinds.get(key)
        if found is not None:
            return Estimate(kind, key, found.proposed, found.adopted, found.authors)
    return Estimate(kind, "", 0, 0, 0)


@dataclass(frozen=True)
class Gate:
    """The edits that go into the diff and those offered as a checklist, each with its
    estimate (keyed by the edit's node and subject)."""

    proposed: tuple[PlannedEdit, ...]
    offered: tuple[PlannedEdit, ...]
    estimates: Mapping[tuple[str, str], Estimate]
    # offered whatever the estimate: (node, subject) → why
    waiting: Mapping[tuple[str, str], Wait] = field(default_factory=dict)
    # proposed only because a setting it runs with was ticked: (node, subject) → (the
    # ticked setting, the rules/knobs.yaml `together` group)
    companions: Mapping[tuple[str, str], tuple[str, Together]] = field(default_factory=dict)


def gate(
    edits: list[PlannedEdit],
    rules: Rules,
    vendor_of: Mapping[str, str],
    included: frozenset[str] = frozenset(),
    offer_only: Mapping[str, tuple[WaitReason, str]] | None = None,
    new_variants: Mapping[str, frozenset[str]] | None = None,
) -> Gate:
    """Split ``edits`` by their estimate against ``policy.propose_above``. Edits of one flag
    (its dotted fields, a backend and its options spelled as fields) go or stay together:
    the diff never combines settings no benchmarked launch ran together. ``included``:
    subjects a maintainer ticked (``/recipe-sync add``), proposed whatever the estimate.
    ``offer_only``: settings offered whatever the estimate (subject → why, what it is): an
    accuracy setting no passing eval covers, drift the benchmark PR did not introduce.
    ``new_variants``: variants the plan adds (key → labels of the profiles rendering it); a
    setting of one that all of them ran (not an image, which keeps its kind's estimate)
    goes with it whatever the estimate."""
    threshold = rules.policy.propose_above
    estimates: dict[tuple[str, str], Estimate] = {}
    for edit in edits:
        vendor = _vendor(edit, vendor_of)
        estimates[(edit.node, edit.subject)] = replace(
            estimate(kind_of(edit, rules, vendor), rules.practice),
            threshold=threshold,
            authors_needed=rules.policy.propose_min_authors,
        )
    only = offer_only or {}
    roots = {flag_root(subject) for subject in only}
    authors = rules.policy.propose_min_authors

    def waits(e: PlannedEdit) -> bool:
        """Offered on its own account: its setting waits, or its kind is not taken enough."""
        return e.kind not in EVIDENCE_ONLY and (
            flag_root(e.subject) in roots
            or not (
                inside_new_variant(e, new_variants or {})
                or _clears(estimates[(e.node, e.subject)], threshold, authors)
            )
        )

    units = _units(edits, rules)
    asked = [e for e in edits if {e.subject, flag_root(e.subject)} & included]
    ticked = {u for u, e in zip(units, edits, strict=True) if e in asked}
    below = {u for u, e in zip(units, edits, strict=True) if u not in ticked and waits(e)}
    proposed = tuple(e for u, e in zip(units, edits, strict=True) if u not in below)
    offered = tuple(e for u, e in zip(units, edits, strict=True) if u in below)
    waiting: dict[tuple[str, str], Wait] = {}
    for edit in offered:
        if flag_root(edit.subject) in roots:
            waiting[(edit.node, edit.subject)] = _waits_for(edit.subject, only)
        elif not waits(edit):
            # offered only because a setting it runs with is (a field of the same flag
            # elsewhere keeps its estimate's sentence, as before)
            found = _runs_with(edit, [e for e in edits if waits(e)], rules)
            if found is not None:
                mate, group = found
                waiting[(edit.node, edit.subject)] = Wait("together", mate, group.reason)
    companions: dict[tuple[str, str], tuple[str, Together]] = {}
    for edit in proposed:
        if edit not in asked and waits(edit):
            # proposed only because a setting it runs with was ticked
            found = _runs_with(edit, asked, rules)
            if found is not None:
                companions[(edit.node, edit.subject)] = found
    return Gate(proposed, offered, estimates, waiting, companions)


def new_variant_profiles(
    edits: Sequence[PlannedEdit], targets: Sequence[Target]
) -> dict[str, frozenset[str]]:
    """The variants ``edits`` add (their skeletons), each with the labels of the profiles of
    ``targets`` that render it."""
    return {
        e.subject: frozenset(t.profile.label for t in targets if t.profile.variant == e.subject)
        for e in edits
        if e.kind == "variant"
    }


def inside_new_variant(edit: PlannedEdit, variants: Mapping[str, frozenset[str]]) -> bool:
    """A setting of a variant the plan adds that every profile of the variant ran: nothing
    else renders it, and maintainers who added a variant for a benchmarked checkpoint wrote
    the lane's settings into it (07-01…07-15: 2 commits by 2 authors, each with the lane's
    flags and variables; of the 3 settings this proposed, 2 adopted at the same node;
    07-16…07-31: its 2 linked leaves proposed at the same node). Its estimate, learnt from
    edits of existing nodes, does not apply; a setting only some of its lanes ran keeps it.
    Not the variant's skeleton (its tp), nor an image, which keeps its kind's estimate."""
    if edit.kind in ("image", "tp", "variant"):
        return False
    return any(
        edit.node.startswith(f"variants.{key}.") and labels <= set(edit.targets)
        for key, labels in variants.items()
    )


def _together(edit: PlannedEdit, rules: Rules) -> Together | None:
    """The rules/knobs.yaml `together` group of an edit's setting, if any."""
    if edit.kind in ("env", "env-new"):
        return rules.knobs.together_with("env", edit.subject)
    if edit.kind in ("flag", "flag-new", "flag-remove"):
        return rules.knobs.together_with("flag", edit.subject)
    return None


def _units(edits: Sequence[PlannedEdit], rules: Rules) -> list[int]:
    """Each edit's unit (an index): edits of one flag (its dotted fields), and settings of
    one `together` group a common lane demands, go into the diff or stay offered as one."""
    parent = list(range(len(edits)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of_root: dict[str, int] = {}
    for i, edit in enumerate(edits):
        root = flag_root(edit.subject)
        if root in first_of_root:
            parent[find(i)] = find(first_of_root[root])
        else:
            first_of_root[root] = i
        for j in range(i):
            if _run_together(edit, edits[j], rules):
                parent[find(i)] = find(j)
    return [find(i) for i in range(len(edits))]


def _runs_with(
    edit: PlannedEdit, among: Sequence[PlannedEdit], rules: Rules
) -> tuple[str, Together] | None:
    """The first setting of ``among`` that ``edit`` runs together with, and their group."""
    group = _together(edit, rules)
    mate = next((e for e in among if _run_together(edit, e, rules)), None)
    return (mate.subject, group) if mate is not None and group is not None else None


def _run_together(edit: PlannedEdit, other: PlannedEdit, rules: Rules) -> bool:
    """Two settings of one `together` group that a common lane demands."""
    group = _together(edit, rules)
    return (
        group is not None
        and group is _together(other, rules)
        and bool(set(edit.targets) & set(other.targets))
    )


def _waits_for(subject: str, only: Mapping[str, tuple[WaitReason, str]]) -> Wait:
    """Why an offered edit waits: its own setting's reason, or one it travels with."""
    setting = (
        subject if subject in only else next(s for s in only if flag_root(s) == flag_root(subject))
    )
    reason, what = only[setting]
    return Wait(reason, setting, what)


def _clears(estimate: Estimate, threshold: float, authors: int) -> bool:
    """The estimate reaches the threshold on adoptions by at least ``authors`` maintainers
    (a practice one person's commits show is not yet the repository's). A threshold of 0
    puts every candidate in the diff."""
    if threshold <= 0:
        return True
    return estimate.probability >= threshold and estimate.authors >= authors


def flag_root(subject: str) -> str:
    """``--attention-config.backend`` → ``--attention-config``: one flag's settings."""
    return subject.split(".", 1)[0] if subject.startswith("--") else subject


def _vendor(edit: PlannedEdit, vendor_of: Mapping[str, str]) -> str:
    """The vendor of every profile that demands the edit ("" when they differ)."""
    vendors = {vendor_of.get(label, "") for label in edit.targets}
    return vendors.pop() if len(vendors) == 1 else ""
