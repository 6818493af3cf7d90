"""The planner's values: targets, planned edits, notes, verification and the plan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.align.compare import Comparison
from bot.align.delta import KeyDelta
from bot.align.profile import Profile
from bot.evidence.model import Evidence, EvidenceReport
from bot.placeholders import as_variables
from bot.recipes import RecipesRepo
from bot.recipes.edit import Edit, EditResult, NodePath, edit_as_dict
from bot.rules.knobs import Together
from bot.shell.result import SourceSpan

EditKind = Literal[
    "variant", "image", "flag", "flag-new", "env", "env-new", "verified", "flag-remove", "tp"
]
# "asked": written because a maintainer asked for the mark (``add meta.hardware.<hw>``) with
# no eval run seen; "declined": a maintainer declined it (``drop meta.hardware.<hw>``)
VerificationState = Literal[
    "verified", "already", "asked", "declined", "not-verified", "no-evidence", "policy-off"
]


@dataclass(frozen=True)
class Target:
    """One recipe profile a benchmark PR ran, with the points that represent it."""

    key: str  # master-config key
    profile: Profile
    representatives: tuple[Comparison, ...]  # non-empty; the first is the one cited
    evidence: Evidence | None = None  # the verifying eval job for this profile
    evidence_note: str = ""  # why there is none
    report: EvidenceReport | None = field(default=None, compare=False, repr=False)  # its jobs
    # every benchmarked point of this variant x hardware runs this TP (not the recipe's) and
    # its eval passed: the plan proposes it as the variant's tp on this hardware
    tp: int | None = None
    # what the benchmark PR changed in this key's launch lines (None: no base to compare,
    # every difference is the PR's)
    delta: KeyDelta | None = field(default=None, compare=False, repr=False)
    # the profile's variant is one this plan adds (bot/align/new_variant.py): no rendering
    # draws from it yet, so what the lane runs is its default, accuracy settings included
    new_variant: bool = False
    # (kind, key) → which value ran where, for the settings the lane launched with several
    # values at this profile's parallelism (bot/align/targets.py): offered, never proposed
    per_point: Mapping[tuple[str, str], str] = field(default_factory=dict, compare=False)

    @property
    def comparison(self) -> Comparison:
        return self.representatives[0]


# why a candidate is offered whatever its adoption estimate: an accuracy setting no passing
# eval covers ("eval"), drift the benchmark PR did not introduce ("older"), a setting tuned
# for the benchmark's sweep ("tuning"), or one whose vLLM default recipe-sync cannot resolve
# for this recipe, so it cannot tell whether the recipe already runs it ("unknown"), or a
# verification mark of a GPU whose eval recipe-sync has not seen ("verify"), or a setting of a
# lane that patched the installed engine before it launched ("patched"), or a setting the lane
# launched with several values at one profile's parallelism ("per-point")
# ("together": offered only because a setting it runs with is, rules/knobs.yaml `together`)
WaitReason = Literal[
    "eval", "older", "tuning", "unknown", "verify", "patched", "per-point", "together"
]
# the reasons a difference is collected only to be offered (bot.align.demands.Collector)
OfferMode = Literal["older", "unknown", "patched"]

# the words for why candidates are offered, not proposed, by reason ("": an estimate below
# the adoption threshold): (in a plan's outcome, in the heading of the offered list)
OFFERED_WORDS: dict[str, tuple[str, str]] = {
    "": ("below the adoption threshold", "kinds with too little adoption history"),
    "eval": ("without a passing eval", "no passing eval at these settings"),
    "older": ("older drift the PR did not change", "older drift this PR did not change"),
    "tuning": ("tuned for the benchmark", "tuned for the benchmark's sweep"),
    "unknown": ("vLLM's default not resolved", "vLLM's default for the recipe not resolved"),
    "verify": ("no eval run seen to verify", "verification marks no eval run backs yet"),
    "patched": ("from a lane that patched vLLM", "the lane patched vLLM before it launched"),
    "per-point": ("launched with several values", "the lane launched several values of each"),
    "together": ("going with an offered setting", "settings that go or stay together"),
}


@dataclass(frozen=True)
class Wait:
    reason: WaitReason
    setting: str  # the setting that waits: the candidate's own, or one it travels with
    what: str  # what that setting is (rules/knobs.yaml's reason)


@dataclass(frozen=True)
class PlannedEdit:
    edit: Edit
    kind: EditKind
    subject: str  # "--moe-backend", "AITER_TRITON_LOG_LEVEL", "image", "mi355x"
    before: str | None  # the recipe's value (None: absent)
    after: str | None  # the new value (None: removed)
    node: str  # YAML path of the node written
    scope: str  # which renderings draw from that node, in words
    reason: str  # the FlagDiff reason (or the evidence), quoted
    placement: str  # why this node: provenance, or the rule that places a new one
    targets: tuple[str, ...]  # labels of the profiles that demand it
    sources: tuple[SourceSpan, ...] = ()  # benchmark script lines of the value
    shadows: NodePath | None = None  # a narrower override: the shared node it overrides
    # narrowed from the layer the rules name: why not there, for the reviewer ("" otherwise)
    wider: str = ""

    def operation(self) -> dict[str, Any]:
        """The editor operation as JSON: ``{"op": "SetScalar", "path": "a.b[0]", …}``."""
        return edit_as_dict(self.edit)


# the prior of an adoption estimate: one adoption in three proposals (a kind with no history
# is offered, not proposed; two adoptions in two proposals reach 3/5 = 0.6)
PRIOR_ADOPTED = 1.0
PRIOR_PROPOSED = 3.0


@dataclass(frozen=True)
class ChangeKind:
    knob: str  # knob class, or "image" / "structure" / "verification"
    change: str  # "new setting", "changed value", "image", "new variant", …
    vendor: str  # "amd", "nvidia", or "" when the edit is not one vendor's

    @property
    def key(self) -> str:
        return f"{self.knob}/{self.change}/{self.vendor or 'any'}"

    def words(self) -> str:
        """``kernel, new setting, AMD``; ``image, NVIDIA`` (an image is its own change)."""
        vendor = f", {self.vendor.upper()}" if self.vendor else ""
        what = self.knob if self.knob == self.change else f"{self.knob}, {self.change}"
        return what + vendor

    def name(self) -> str:
        """``kernel new setting (AMD)``; ``image (AMD)``."""
        what = self.knob if self.knob == self.change else f"{self.knob} {self.change}"
        return what + (f" ({self.vendor.upper()})" if self.vendor else "")


@dataclass(frozen=True)
class Estimate:
    kind: ChangeKind
    basis: str  # the practice key the counts are from ("" when none)
    proposed: int
    adopted: int
    authors: int
    # the policy the estimate was weighed against (propose_above, propose_min_authors; 0:
    # not weighed), so a text can say why a kind taken often enough still waits
    threshold: float = 0.0
    authors_needed: int = 0

    @property
    def probability(self) -> float:
        return (self.adopted + PRIOR_ADOPTED) / (self.proposed + PRIOR_PROPOSED)

    def tally(self) -> str:
        """``kernel new setting (AMD): 7 of 7``."""
        return f"{self.kind.name()}: {self.adopted} of {self.proposed}"

    def sentence(self) -> str:
        """``of 9 scored proposals of this kind (kernel, new setting, AMD), maintainers
        adopted 6`` — or that history has none."""
        if not self.proposed:
            return f"no scored proposal of this kind ({self.kind.words()}) in the history"
        said = (
            f"of {self.proposed} scored proposal{'s' * (self.proposed != 1)} of this kind "
            f"({self.kind.words()}), maintainers adopted {self.adopted}"
        )
        if self.probability >= self.threshold and self.authors < self.authors_needed:
            who = "one maintainer" if self.authors == 1 else f"{self.authors} maintainers"
            said += (
                f", all by {who} (a kind is proposed once {self.authors_needed} maintainers "
                "have taken it)"
            )
        return said


@dataclass(frozen=True)
class CommentChange:
    """A recipe comment written for a value the patch changes, and what the patch does."""

    subject: str  # "--moe-backend", an env var, "image"
    value: str  # the old value the comment names
    at: str  # the commented node
    old: tuple[str, ...]  # its lines, without '#'
    action: Literal["replaced", "removed", "kept"]  # kept: the shared value still applies
    new_at: str = ""  # where a comment was written (the same node, or the new override)
    new: tuple[str, ...] = ()
    source: str = ""  # the benchmark script line whose comment is quoted ("" when none)


@dataclass(frozen=True)
class FlagNote:
    """A difference reported without an edit (equivalent, benchmark-only, recipe-only, …)."""

    kind: str  # flag | env | image
    subject: str
    bench: str | None
    recipe: str | None
    verdict: str
    reason: str
    target: str  # profile label
    node: str | None = None  # where the recipe defines it

    @property
    def shown(self) -> str:
        """The value a list names it by: the benchmark's (its run-time parts as the script's
        variables), else the recipe's, else the flag."""
        return as_variables(self.bench) if self.bench else self.recipe or self.subject


@dataclass(frozen=True)
class Setting:
    """A benchmark setting the plan does not carry into the recipe, and why (its knob class
    and rules/policy.yaml knob_policy; the image when the recipe floats or no eval passed)."""

    knob: str  # kernel | serving | accuracy | tuning | workload | harness | unclassified | image
    kind: str  # flag | env | image
    subject: str
    bench: str | None
    recipe: str | None
    reason: str
    target: str  # profile label


@dataclass(frozen=True)
class Verification:
    """Whether ``meta.hardware.<hw>: verified`` is written, and why (not)."""

    hardware: str
    state: VerificationState
    reason: str
    evidence: Evidence | None = None
    serving_match: str | None = None  # the computed sentence for the evidence section

    @property
    def marked(self) -> bool:
        """The recipe is marked verified on this GPU after the PR (written or already so)."""
        return self.state in ("verified", "already", "asked")


@dataclass(frozen=True)
class AlignmentPlan:
    recipe_path: str
    targets: tuple[Target, ...]
    edits: tuple[PlannedEdit, ...]
    defaults: tuple[FlagNote, ...]  # one side omits a flag: equivalent or not, with the default
    recipe_only: tuple[FlagNote, ...]
    benchmark_only: tuple[FlagNote, ...]
    front_end: tuple[FlagNote, ...]
    unknown: tuple[FlagNote, ...]
    skipped: tuple[str, ...]  # drift left unedited and why (conflict, no node, unknown value)
    notes: tuple[str, ...]
    verifications: tuple[Verification, ...]
    settings: tuple[Setting, ...] = ()  # benchmark settings not carried, with the reason
    # drift the benchmark PR did not introduce: reported, never in this PR's edits
    preexisting: tuple[FlagNote, ...] = ()
    to_classify: tuple[str, ...] = ()  # flags / env vars rules/knobs.yaml does not classify
    comments: tuple[CommentChange, ...] = ()  # recipe comments about a value the patch changes
    # (subject, who) of hunks declined on the alignment PR: not proposed ("" who: the CLI)
    dropped: tuple[tuple[str, str], ...] = ()
    # candidates below the policy's propose_above: not in the patch, offered as a checklist
    offered: tuple[PlannedEdit, ...] = ()
    # (node, subject, estimate) of every edit and offered candidate
    estimates: tuple[tuple[str, str, Estimate], ...] = ()
    # (node, subject, why) of candidates offered whatever their estimate
    waiting: tuple[tuple[str, str, Wait], ...] = ()
    # (node, subject, ticked setting, group) of edits proposed because they run with a
    # setting a maintainer ticked (rules/knobs.yaml `together`)
    companions: tuple[tuple[str, str, str, Together], ...] = ()
    # candidates left out because they would undo a maintainer's recent change, and which
    # (in ``skipped`` too when drift, in ``notes`` when they were only to be offered)
    withheld: tuple[str, ...] = ()
    failure: str | None = None  # the plan cannot be applied (invariants, editor)
    result: EditResult | None = None
    # the edited recipes (None in an AlignRun: its outcome quotes what it rendered from them)
    after: RecipesRepo | None = field(default=None, compare=False, repr=False)

    def estimate_of(self, edit: PlannedEdit) -> Estimate | None:
        return next((e for n, s, e in self.estimates if (n, s) == (edit.node, edit.subject)), None)

    def companion_of(self, edit: PlannedEdit) -> tuple[str, Together] | None:
        """(the ticked setting, its group) when ``edit`` is proposed because it runs with it."""
        return next(
            ((t, w) for n, s, t, w in self.companions if (n, s) == (edit.node, edit.subject)),
            None,
        )

    def waits_for(self, edit: PlannedEdit) -> Wait | None:
        return next((w for n, s, w in self.waiting if (n, s) == (edit.node, edit.subject)), None)

    def offered_as_tuning(self, edit: PlannedEdit) -> bool:
        """Is ``edit`` offered as the benchmark's tuning (the benchmark's choice, not drift)?"""
        wait = self.waits_for(edit)
        return wait is not None and wait.reason == "tuning"

    @property
    def offers_drift(self) -> bool:
        """Is an offered candidate recipe drift? A recipe that only leaves tuning unticked is
        aligned."""
        return not all(self.offered_as_tuning(edit) for edit in self.offered)

    @property
    def not_edited(self) -> tuple[str, ...]:
        """Why drift is left unedited, for the reviewer: what blocks, and what is withheld."""
        return tuple(dict.fromkeys([*self.skipped, *self.withheld]))

    @property
    def status(self) -> Literal["patch", "aligned", "blocked", "failed", "offered"]:
        if self.failure is not None:
            return "failed"
        if self.result is not None and not self.result.unchanged:
            return "patch"
        if self.skipped:
            return "blocked"
        # nothing proposed, candidates below the adoption threshold offered to tick (tuning
        # alone is no drift: the recipe is aligned)
        return "offered" if self.offers_drift else "aligned"


def edited_hardware(plan: AlignmentPlan) -> frozenset[str]:
    """The hardware ids ``plan``'s edits are for: those of the lanes that demand an edit (an
    edit for one GPU is not for the recipe's other GPUs the PR's lanes also ran)."""
    edited = {label for edit in plan.edits for label in edit.targets}
    return frozenset(t.profile.hardware for t in plan.targets if t.profile.label in edited)
