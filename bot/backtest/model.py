"""The rows a backtest reports: one per merged benchmark PR (plain, JSON-able values)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, get_args

from bot.align.reproduction.model import SECTION_WRITTEN
from bot.contract import edits_digest

Outcome = Literal[
    "alignment PR",
    "aligned",
    "blocked",
    "offered",
    "no edit found",
    "context only",
    "unmapped",
    "out of scope",
    "no vLLM change",
    "bad input",
    "error",
]
OUTCOMES: tuple[str, ...] = get_args(Outcome)


@dataclass(frozen=True)
class EditRow:
    recipe: str
    kind: str
    subject: str  # flag, env var, image, hardware
    node: str  # YAML path
    before: str | None
    after: str | None
    # the lanes that demand the edit (the plan's targets): which GPUs, variants and strategies
    # a maintainer's node must cover for the same value there to count as the same setting
    hardware: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EditRow:
        return cls(
            **{
                **data,
                "hardware": tuple(data.get("hardware", ())),
                "variants": tuple(data.get("variants", ())),
                "strategies": tuple(data.get("strategies", ())),
            }
        )


@dataclass(frozen=True)
class MaintainerEdit:
    commit: str
    recipe: str
    node: str  # YAML path of a changed leaf
    before: str | None
    after: str | None
    match: str  # "same edit" | "same subject at another layer" | "not proposed by the bot"


@dataclass(frozen=True)
class LaunchDigest:
    """What one group of benchmark points launched for one recipe profile (the agreement
    score's linker compares it with maintainers' changes): one digest per distinct launch."""

    key: str  # master-config key
    recipe: str
    variant: str
    hardware: str
    strategy: str
    status: str  # represents | context | other-point
    tp: int
    scenario: str
    image: str
    args: tuple[tuple[str, str], ...]  # (canonical flag, canonical value), bot.vllm.pairs
    env: tuple[tuple[str, str], ...]
    # what the PR changed in this lane (bot.align.delta): flag, env or "image" subjects;
    # `new` when the lane (or its key) is new at the PR's head, so all of it is the PR's
    changed: tuple[str, ...] = ()
    new: bool = False
    model: str = ""  # the checkpoint the benchmark serves (an unmapped lane has no recipe)
    # subjects the recipe already renders with the benchmark's value (or its vLLM default)
    agrees: tuple[str, ...] = ()
    # the image the recipe renders for the lane ("" when not compared): a maintainer's image
    # equal to it changes nothing there (a floating tag written again at a new node)
    recipe_image: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LaunchDigest:
        return cls(
            **{
                **data,
                "args": tuple(tuple(p) for p in data["args"]),
                "env": tuple(tuple(p) for p in data["env"]),
                "changed": tuple(data.get("changed", ())),
                "agrees": tuple(data.get("agrees", ())),
            }
        )


@dataclass(frozen=True)
class GuideSection:
    """A reproduction section the alignment PR writes (or keeps) in a recipe's guide."""

    recipe: str
    block: str  # the hardware id (one block per recipe and GPU); older rows <v>.<hw>.<scenario>
    action: str  # inserted | updated | adopted | unchanged | skipped
    lines: int = 0  # lines of the block as the PR writes it (0 when it writes none)

    @property
    def written(self) -> bool:
        """Does the alignment PR write this section (a new or rewritten block)?"""
        return self.action in SECTION_WRITTEN

    @property
    def hardware(self) -> str:
        parts = self.block.split(".")
        return parts[1] if len(parts) >= 3 else self.block


@dataclass(frozen=True)
class HeldSetting:
    """A benchmark setting the plan did not carry into the recipe, and why."""

    recipe: str
    knob: str  # knob class (rules/knobs.yaml), or "image"
    kind: str  # flag | env | image
    subject: str
    value: str | None
    reason: str


@dataclass(frozen=True)
class PRRow:
    number: int
    sha: str
    base: str
    day: str
    title: str
    recipes_sha: str  # "" for a plain directory
    outcome: str
    reason: str
    files: tuple[str, ...] = ()  # recipe files the alignment PR would write
    edits: tuple[EditRow, ...] = ()
    notes: tuple[str, ...] = ()  # e.g. a broken recipe file elsewhere
    keys: tuple[str, ...] = ()  # affected config keys
    maintainers: tuple[MaintainerEdit, ...] = field(default=())
    seconds: float = 0.0
    added_lines: int = 0  # lines the alignment PR's patch adds, all files
    # below-threshold candidates offered as unticked checkboxes in the PR body (not in the diff)
    offered: tuple[EditRow, ...] = ()
    # the reproduction sections the PR writes or keeps, with their lengths
    guide: tuple[GuideSection, ...] = ()
    # recorded for the agreement score only (Settings.record_launches): left out of the
    # backtest's own JSON when empty, so its reports read as before
    launches: tuple[LaunchDigest, ...] = ()
    held: tuple[HeldSetting, ...] = ()
    # (recipe file, earlier PR): that PR of the window proposed the same YAML edits of the
    # file and, this replay's recipes main still lacking them, its alignment PR is still open
    # (mark_duplicates; not cached: it depends on the window). Left out of the JSON when empty
    duplicate_of: tuple[tuple[str, int], ...] = ()

    @property
    def opens_pr(self) -> bool:
        return self.outcome == "alignment PR"

    @property
    def repeated_files(self) -> frozenset[str]:
        """The recipe files whose change an earlier PR's open proposal already carries."""
        return frozenset(recipe for recipe, _ in self.duplicate_of)

    @property
    def duplicate(self) -> bool:
        """Is every recipe change of this alignment PR already proposed by an earlier PR's
        open one (so the App opens none: one change, one PR)?"""
        return self.opens_pr and bool(self.files) and self.repeated_files >= set(self.files)

    @property
    def new_edits(self) -> tuple[EditRow, ...]:
        """The YAML edits of the recipe files no earlier open proposal carries."""
        repeated = self.repeated_files
        return tuple(e for e in self.edits if e.recipe not in repeated)

    @property
    def new_sections(self) -> tuple[GuideSection, ...]:
        """The sections written to the recipe files no earlier open proposal carries."""
        repeated = self.repeated_files
        return tuple(g for g in self.sections_written if g.recipe not in repeated)

    @property
    def guide_only(self) -> bool:
        """An alignment PR with no YAML edit: it writes only reproduction sections."""
        return self.opens_pr and not self.edits

    @property
    def sections_written(self) -> tuple[GuideSection, ...]:
        return tuple(g for g in self.guide if g.written) if self.opens_pr else ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("seconds")
        for recorded in ("launches", "guide", "held", "offered", "duplicate_of"):
            if not data[recorded]:
                data.pop(recorded)
        if self.duplicate_of:
            data["duplicate_of"] = dict(self.duplicate_of)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PRRow:
        return cls(
            number=int(data["number"]),
            sha=data["sha"],
            base=data["base"],
            day=data["day"],
            title=data["title"],
            recipes_sha=data["recipes_sha"],
            outcome=data["outcome"],
            reason=data["reason"],
            files=tuple(data.get("files", ())),
            edits=tuple(EditRow.from_json(e) for e in data.get("edits", ())),
            notes=tuple(data.get("notes", ())),
            keys=tuple(data.get("keys", ())),
            maintainers=tuple(MaintainerEdit(**m) for m in data.get("maintainers", ())),
            added_lines=int(data.get("added_lines", 0)),
            offered=tuple(EditRow.from_json(e) for e in data.get("offered", ())),
            launches=tuple(LaunchDigest.from_json(d) for d in data.get("launches", ())),
            guide=tuple(GuideSection(**g) for g in data.get("guide", ())),
            held=tuple(HeldSetting(**h) for h in data.get("held", ())),
            duplicate_of=tuple(
                (str(recipe), int(number))
                for recipe, number in data.get("duplicate_of", {}).items()
            ),
        )


def recipe_changes(row: PRRow) -> dict[str, str]:
    """recipe file → :func:`~bot.contract.edits_digest` of the YAML edits the row's alignment
    PR makes to it (files with no YAML edit, guide only, are left out)."""
    by_file: dict[str, list[tuple[str, str | None]]] = {}
    for edit in row.edits:
        by_file.setdefault(edit.recipe, []).append((edit.node, edit.after))
    return {recipe: edits_digest(pairs) for recipe, pairs in by_file.items()}


def mark_duplicates(rows: Iterable[PRRow]) -> tuple[PRRow, ...]:
    """The rows (in merge order) with ``duplicate_of`` set where an earlier alignment PR of
    the window proposed the same YAML edits of the same recipe file: the App's one PR per
    change (bot/service/pulls.py). That PR is still open: this replay's recipes main lacks
    its edits, or it would not propose them again (a maintainer who adopted them and later
    reverted them is not told apart)."""
    first: dict[tuple[str, str], int] = {}  # (recipe, edits digest) → the PR proposing it
    marked: list[PRRow] = []
    for row in rows:
        repeated: list[tuple[str, int]] = []
        if row.opens_pr:
            for recipe, digest in recipe_changes(row).items():
                earlier = first.setdefault((recipe, digest), row.number)
                if earlier != row.number:
                    repeated.append((recipe, earlier))
        marked.append(replace(row, duplicate_of=tuple(repeated)))
    return tuple(marked)


@dataclass(frozen=True)
class Volume:
    """How much the alignment PRs of a set of replays would write: what a maintainer reviews."""

    prs: int  # alignment PRs opened (duplicates of an open one not counted)
    guide_only: int  # of which write no YAML edit (reproduction sections only)
    edits: int  # YAML edits in them
    offered: int  # candidates offered as unticked checkboxes
    sections: int  # reproduction sections written (inserted, updated, adopted)
    guide_lines: int  # lines of those sections
    added_lines: int  # lines the patches add, all files
    max_added: int  # the largest patch, in added lines
    max_pr: int | None  # its PR
    # alignment PRs left out: their recipe changes are already proposed by an open one
    duplicates: int = 0

    @classmethod
    def of(cls, rows: Iterable[PRRow]) -> Volume:
        proposing = [r for r in rows if r.opens_pr]
        opened = [r for r in proposing if not r.duplicate]
        biggest = max(opened, key=lambda r: (r.added_lines, -r.number), default=None)
        return cls(
            prs=len(opened),
            guide_only=sum(1 for r in opened if r.guide_only),
            edits=sum(len(r.new_edits) for r in opened),
            offered=sum(len(r.offered) for r in opened),
            sections=sum(len(r.new_sections) for r in opened),
            guide_lines=sum(g.lines for r in opened for g in r.new_sections),
            added_lines=sum(r.added_lines for r in opened),
            max_added=biggest.added_lines if biggest is not None else 0,
            max_pr=biggest.number if biggest is not None else None,
            duplicates=len(proposing) - len(opened),
        )

    def text(self) -> str:
        """``12 alignment PRs (3 guide-only), 20 YAML edits, 9 reproduction sections,
        1,240 lines added (max 310, #2323)``."""
        biggest = f", #{self.max_pr}" if self.max_pr is not None and self.max_added else ""
        offered = f", {self.offered} offered" if self.offered else ""
        repeated = (
            f"; {self.duplicates} more repeat an open one's recipe change, not counted"
            if self.duplicates
            else ""
        )
        return (
            f"{self.prs} alignment PRs ({self.guide_only} guide-only{repeated}), "
            f"{self.edits} YAML edits"
            f"{offered}, {self.sections} reproduction sections ({self.guide_lines:,} lines), "
            f"{self.added_lines:,} lines added (max {self.max_added:,}{biggest})"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BacktestReport:
    bench: str
    recipes: str
    rows: tuple[PRRow, ...]
    # OWNER/NAME of each repository for the HTML report's links ("" when unknown)
    bench_name: str = ""
    recipes_name: str = ""

    def counts(self) -> dict[str, int]:
        out = {name: 0 for name in OUTCOMES}
        for row in self.rows:
            out[row.outcome] = out.get(row.outcome, 0) + 1
        return {k: v for k, v in out.items() if v}

    @property
    def errors(self) -> tuple[PRRow, ...]:
        return tuple(r for r in self.rows if r.outcome == "error")

    def summary(self) -> str:
        parts = ", ".join(f"{n} {k}" for k, n in self.counts().items())
        noted = sum(1 for r in self.rows if r.notes)
        return (
            f"{len(self.rows)} merged PRs: {parts or 'none'}; "
            f"{len(self.errors)} errors; {noted} with notes; volume: {self.volume.text()}"
        )

    @property
    def volume(self) -> Volume:
        return Volume.of(self.rows)
