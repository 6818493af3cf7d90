"""The rows a backtest reports: one per merged benchmark PR (plain, JSON-able values)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

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
OUTCOMES: tuple[str, ...] = (
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
)


@dataclass(frozen=True)
class EditRow:
    recipe: str
    kind: str
    subject: str  # flag, env var, image, hardware
    node: str  # YAML path
    before: str | None
    after: str | None


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
    block: str  # <variant>.<hardware>.<scenario>
    action: str  # inserted | updated | adopted | unchanged | skipped


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
    # recorded for the agreement score only (Settings.record_launches): left out of the
    # backtest's own JSON when empty, so its reports read as before
    launches: tuple[LaunchDigest, ...] = ()
    guide: tuple[GuideSection, ...] = ()
    held: tuple[HeldSetting, ...] = ()

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("seconds")
        for recorded in ("launches", "guide", "held"):
            if not data[recorded]:
                data.pop(recorded)
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
            edits=tuple(EditRow(**e) for e in data.get("edits", ())),
            notes=tuple(data.get("notes", ())),
            keys=tuple(data.get("keys", ())),
            maintainers=tuple(MaintainerEdit(**m) for m in data.get("maintainers", ())),
            launches=tuple(LaunchDigest.from_json(d) for d in data.get("launches", ())),
            guide=tuple(GuideSection(**g) for g in data.get("guide", ())),
            held=tuple(HeldSetting(**h) for h in data.get("held", ())),
        )


@dataclass(frozen=True)
class BacktestReport:
    bench: str
    recipes: str
    rows: tuple[PRRow, ...]

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
            f"{len(self.errors)} errors; {noted} with notes"
        )
