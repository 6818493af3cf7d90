"""The values one alignment run produces: the analysis only. Texts (PR title and body, the
comment, the check run) are rendered from it by :mod:`bot.present`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from bot.align.caches import EngineCaches
from bot.align.change import AffectedKey, BenchmarkChange
from bot.align.compare import Comparison
from bot.align.delta import KeyDelta
from bot.align.guide_images import ImageLine
from bot.align.plan import AlignmentPlan
from bot.align.profile import Profile
from bot.align.quoted import GeneratedCommand, RecipesNames
from bot.align.regression import BuilderReport, RegressionMatrix
from bot.align.reproduction import GuideDrift, GuidePlacement
from bot.benchmarks import LaunchLine, Point
from bot.benchmarks.changelog import ChangelogEntry, vllm_prs
from bot.evidence.collect import BlobShaAt
from bot.evidence.model import EvidenceReport
from bot.evidence.source import RunSource
from bot.recipes import RecipesRepo
from bot.rules import Rules
from bot.sources import FileSource
from bot.vllm import FlagDiff

PointStatus = Literal[
    "represents",  # compared and planned against
    "context",  # compared; another arm represents the profile, or synthetic acceptance
    "other-point",  # another parallelism of the sweep
    "unmapped",
    "invalid",  # the script exits for this point
    "no-launch",
    "error",
]
OutcomeStatus = Literal["patch", "aligned", "blocked", "failed", "offered"]
# a blocked outcome's reason: these words, then the plan's skipped differences
UNCLOSED_DRIFT = "drift remains that no safe edit closes"
Builder = Callable[[Mapping[str, bytes], RecipesRepo], BuilderReport]


@dataclass(frozen=True)
class QuotedInputs:
    """What the texts quote of a run's inputs: the benchmark PR and the recipes commit it
    compared, and the rules it applied (no source, no callable)."""

    rules: Rules
    bench_ref: str  # ``owner/name#N`` (or the head's label when there is no PR)
    bench_repo: str = ""
    pr_number: int | None = None
    head_sha: str = ""
    base_sha: str = ""
    recipes_repo: str = ""
    recipes_sha: str = ""


@dataclass(frozen=True)
class AlignInputs:
    bench: FileSource  # the benchmark PR head
    bench_base: FileSource | None  # the PR base (None: only the requested keys)
    recipes: FileSource  # the recipes default-branch head
    rules: Rules
    config_keys: tuple[str, ...] = ()
    runs: RunSource | None = None  # workflow-run evidence for the PR head
    bench_repo: str = ""  # OWNER/NAME, for the text
    pr_number: int | None = None
    head_sha: str = ""
    base_sha: str = ""
    head_branch: str | None = None
    head_repo: str | None = None  # a fork's OWNER/NAME
    recipes_repo: str = ""
    recipes_sha: str = ""
    blob_sha_at: BlobShaAt | None = None  # (commit, path) → blob sha, for stale evidence
    earlier_heads: tuple[str, ...] = ()
    builder: Builder | None = None  # runs the recipes builder; None: not run
    # recipe path → flags ignored for it (the dashboard issue): no demand is planned for them
    ignored_flags: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # recipe path ("*": every recipe file) → flag or env var → who declined that hunk on the
    # alignment PR ("" for the CLI's --drop): not proposed, listed as dropped on request
    dropped: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # recipe path ("*": every recipe file) → flags or env vars a maintainer asked for
    # (`/recipe-sync add`, `align --include`): proposed whatever their adoption estimate
    included: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # evaluations and recipes shared with the caller's other runs (None: this run only)
    caches: EngineCaches | None = field(default=None, compare=False, repr=False)

    def dropped_for(self, recipe_path: str) -> dict[str, str]:
        """The hunks declined for one recipe file (its own and every file's)."""
        return {**self.dropped.get("*", {}), **self.dropped.get(recipe_path, {})}

    def included_for(self, recipe_path: str) -> frozenset[str]:
        """The candidates asked for in one recipe file (its own and every file's)."""
        return self.included.get("*", frozenset()) | self.included.get(recipe_path, frozenset())

    @property
    def bench_ref(self) -> str:
        """``owner/name#N`` (or the head's label when there is no PR)."""
        if self.pr_number is not None:
            return f"{self.bench_repo or 'benchmark'}#{self.pr_number}"
        return self.bench.label

    def quoted(self) -> QuotedInputs:
        """These inputs as the texts quote them."""
        return QuotedInputs(
            rules=self.rules,
            bench_ref=self.bench_ref,
            bench_repo=self.bench_repo,
            pr_number=self.pr_number,
            head_sha=self.head_sha,
            base_sha=self.base_sha,
            recipes_repo=self.recipes_repo,
            recipes_sha=self.recipes_sha,
        )


@dataclass(frozen=True)
class PointResult:
    key: str
    point: Point
    arm: str
    status: PointStatus
    reason: str
    profile: Profile | None = None
    comparison: Comparison | None = field(default=None, compare=False, repr=False)
    launch: LaunchLine | None = field(default=None, compare=False, repr=False)

    @property
    def drift(self) -> tuple[FlagDiff, ...]:
        return self.comparison.drift if self.comparison is not None else ()


@dataclass(frozen=True)
class KeyResult:
    key: AffectedKey
    points: tuple[PointResult, ...]
    problem: str | None = None  # key-level: out of scope, multi-node, invalid entry
    error: bool = False  # the problem is bad input (an invalid entry), not a scope limit


@dataclass(frozen=True)
class RecipeOutcome:
    plan: AlignmentPlan
    matrix: RegressionMatrix | None
    status: OutcomeStatus
    reason: str  # why there is no patch (empty with a patch)
    patch: str = ""  # git-applicable unified diff ("" when none)
    new_text: bytes | None = None
    fingerprint: str = ""
    guide: tuple[GuidePlacement, ...] = ()  # reproduction sections and what happened to each
    guide_drift: tuple[GuideDrift, ...] = ()  # hand-written guide commands vs launch lines
    guide_images: tuple[ImageLine, ...] = ()  # guide lines naming an image the patch re-pins
    # the first target's command rendered from the edited recipe (a patch with node edits)
    after: GeneratedCommand | None = field(default=None, compare=False, repr=False)

    @property
    def guide_only(self) -> bool:
        """The patch changes only the guide (no recipe node is edited)."""
        return self.status == "patch" and not self.plan.edits

    @property
    def recipe_path(self) -> str:
        return self.plan.recipe_path

    @property
    def context_only(self) -> bool:
        """No point stands for the recipe's profile (another parallelism, synthetic arms)
        and nothing is written for it: nothing in the recipe was compared."""
        return self.status == "aligned" and not self.plan.targets

    @property
    def unclosed_drift(self) -> bool:
        """Blocked before any patch: drift remains that no safe edit closes (``plan.skipped``
        names each); a patch the regression matrix blocks has its matrix."""
        return self.status == "blocked" and self.matrix is None and bool(self.plan.skipped)


@dataclass(frozen=True)
class BenchLines:
    """Benchmark lines a drifted env var or image is set on (for the check run's
    annotations): (script, variable) → its assignment line; config key → (file, image line)."""

    env: Mapping[tuple[str, str], int] = field(default_factory=dict)
    images: Mapping[str, tuple[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class AlignRun:
    inputs: QuotedInputs = field(repr=False, compare=False)
    names: RecipesNames = field(repr=False, compare=False)  # the recipes' (before the edit)
    change: BenchmarkChange
    keys: tuple[KeyResult, ...]
    outcomes: tuple[RecipeOutcome, ...]
    evidence: EvidenceReport | None
    broken_recipes: tuple[tuple[str, str], ...] = ()  # (recipe path, why it does not load)
    # per config key with points: what the PR changed in its launch lines (align/delta.py)
    deltas: Mapping[str, KeyDelta] = field(default_factory=dict, compare=False, repr=False)
    # what the texts quote from the benchmark repository, read here so that they read none:
    # config key → the perf-changelog entries this PR added for it (keys of planned edits)
    changelog: Mapping[str, tuple[ChangelogEntry, ...]] = field(default_factory=dict)
    lines: BenchLines = field(default_factory=lambda: BenchLines())

    def upstream(self, key: str) -> tuple[int, ...]:
        """The upstream vLLM PRs the changelog entries of ``key`` cite."""
        return vllm_prs(self.changelog.get(key, ()))

    @property
    def patches(self) -> tuple[RecipeOutcome, ...]:
        return tuple(o for o in self.outcomes if o.status == "patch")
