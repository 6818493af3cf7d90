"""The values of the guide's reproduction sections and guide-command drift."""

from __future__ import annotations

from dataclasses import dataclass

from bot.align.profile import Profile
from bot.benchmarks import LaunchLine
from bot.vllm import FlagDiff

KIND = "reproduction"


@dataclass(frozen=True)
class SectionPoint:
    """One benchmark point that maps to a recipe (any status but unmapped/invalid)."""

    key: str
    profile: Profile
    launch: LaunchLine
    status: str  # represents | context | other-point


@dataclass(frozen=True)
class ReproCommand:
    topology: str  # "TP4", "DP8 + expert parallel (DP attention)"
    arm: str  # what the command stands for: "eval arm", "throughput arms, real acceptance …"
    env: tuple[tuple[str, str, str], ...]  # (class, name, value)
    lines: tuple[str, ...]  # the command's lines (flag + value per line)
    router: tuple[str, ...] | None
    conc_rules: tuple[tuple[str, str], ...]  # (flag, rule text "2 × CONC")
    concs: tuple[int, ...]
    dropped_synthetic: tuple[str, ...]  # speculative-config keys removed
    deltas: tuple[tuple[str, str], ...]  # (knob class, Markdown bullet)
    harness_left_out: tuple[str, ...]  # names/flags not in the command (harness, front end)
    synthetic_arms: tuple[int, ...] = ()  # throughput arms' concurrencies, synthetic acceptance
    run_time: tuple[tuple[str, str], ...] = ()  # (flag, variable) known only when the script runs
    synthetic_fields: tuple[str, ...] = ()  # their synthetic speculative-config settings
    # values the script computes per concurrency without a rule (capture-size lists):
    # (flag, shell variable, ((conc, value), …)), one case arm per concurrency
    conc_values: tuple[tuple[str, str, tuple[tuple[int, str], ...]], ...] = ()
    base: str = ""  # the recipe command its deltas are from (sections.recipe_label)


@dataclass(frozen=True)
class ReproSection:
    block_id: str
    recipe_path: str
    variant: str
    hardware: str
    scenario: str
    keys: tuple[str, ...]
    heading: str
    image: str
    commands: tuple[ReproCommand, ...]
    evidence: tuple[str, ...]  # Markdown lines
    after: tuple[str, ...]  # heading words of the section it follows
    bench_ref: str  # "owner/name#N"
    bench_url: str | None
    head_sha: str
    recipe_label: str  # "the recipe's MI355X single_node_tp command (…)"
    # the PR's other lanes on this hardware, in words ("TP8 + MTP"; "`mxfp8`, fixed
    # sequence length: TP4"): one block per hardware shows one lane's deltas
    also: tuple[str, ...] = ()

    @property
    def has_deltas(self) -> bool:
        """The benchmark's command differs from the recipe's somewhere (what a section is for
        when the recipe itself is not edited)."""
        return any(command.deltas for command in self.commands)


@dataclass(frozen=True)
class GuidePlacement:
    """What happened to one section in the recipe's guide."""

    section: ReproSection
    action: str  # inserted | updated | adopted | unchanged | skipped
    where: str
    reason: str = ""

    @property
    def written(self) -> bool:
        """The PR writes this section into the guide (new, replaced or taken over)."""
        return self.action in SECTION_WRITTEN


SECTION_WRITTEN = ("inserted", "updated", "adopted")


@dataclass(frozen=True)
class GuideDrift:
    """A hand-written guide command compared with the launch line of the same profile."""

    recipe_path: str
    heading: str  # the heading path above it
    line: int  # 1-based line in the recipe file
    hardware: str
    key: str  # the config key whose launch line it is compared with
    point: str
    diffs: tuple[FlagDiff, ...]  # drift only
    not_compared: tuple[str, ...]  # flags whose value is a shell variable
    managed: bool
    cites_benchmark: bool
    variant: str = "default"

    @property
    def drifted(self) -> bool:
        return bool(self.diffs)

    def summary(self) -> str:
        parts = []
        for d in self.diffs:
            bench = " ".join(d.bench_tokens) or "omitted"
            guide = " ".join(d.recipe_tokens) or "omitted"
            parts.append(f"{d.flag}: benchmark {bench}, guide {guide}")
        return "; ".join(parts)
