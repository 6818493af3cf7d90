"""Benchmark reproduction sections of the recipe guide (computed, never typed by hand).

Per (recipe file, variant, hardware, benchmark scenario) the points of the benchmark PR that
map to that recipe — the recipe's own profile and the points that are not (another TP,
DP-attention behind a router, synthetic-acceptance throughput arms) — become one managed
Markdown block in ``guide:`` (:mod:`bot.recipes.guide` places it and keeps every other byte):

- a heading and one paragraph: which benchmark PR and config key, that it is not the default;
- the deltas from the recipe's own command for that hardware (the recipe as this PR leaves
  it), from the same semantic diff the planner uses;
- the env exports grouped by knob class (kernel selection required to match the benchmarked
  path vs benchmark-only settings), harness variables left out;
- one full ``vllm serve`` command per topology (+ the router command when the benchmark
  starts one), synthetic-acceptance fields dropped (real acceptance restored), values that the
  script derives from the concurrency written as its rule (``$((2 * CONC))``);
- the image the benchmark ran and the eval evidence (run, attempt, task, metric, value ±
  stderr) when a run verified it.

The same module reads the hand-written guide commands back (:func:`guide_drift`): each
``vllm serve`` of the recipe's model in a shell fence, mapped to a launch line by hardware
(named in its headings) and parallelism, diffed under vLLM's CLI semantics.
"""

from __future__ import annotations

import functools
import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot import markdown as md
from bot.align.compare import Comparison, compare, recipe_min_version, taxonomy_vram
from bot.align.nodes import bench_field_tokens, hw_label, json_holder, one_line_json
from bot.align.profile import SYNTHETIC_KEYS, Profile, synthetic_acceptance
from bot.benchmarks import BenchRepo, LaunchLine
from bot.benchmarks.router import router_command
from bot.errors import RecipeSyncError
from bot.evidence.model import Evidence, EvidenceReport
from bot.recipes import RecipesRepo
from bot.recipes.guide import (
    GuideCommand,
    GuideError,
    headings,
    insertion_point,
    locate_guide,
    managed_blocks,
    place_block,
    section_end,
    serve_commands,
)
from bot.recipes.text import quote_value
from bot.rules import Rules
from bot.rules.knobs import KnobKind
from bot.vllm import FlagDiff, LaunchSide, Verdict, diff_launch
from bot.vllm.argv import flag_value, option_name, value_at, without_flags

KIND = "reproduction"
_OPAQUE = re.compile(r"<([A-Za-z_][A-Za-z0-9_]*):opaque:[^>]*>")
# Verdicts whose flags stay out of a copy-paste serve command (the harness's own settings).
_HARNESS_VERDICTS = frozenset({Verdict.FRONT_END_ONLY, Verdict.BENCHMARK_ONLY})
_DRIFT = frozenset({Verdict.DIFFERS, Verdict.RECIPE_ONLY})


# ------------------------------------------------------------------------------ values


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

    @property
    def has_deltas(self) -> bool:
        """The benchmark's command differs from the recipe's somewhere (what a section is for
        when the recipe itself is not edited)."""
        return any(command.deltas for command in self.commands)

    def body(self, level: int) -> list[str]:
        """The block's Markdown lines with its heading at ``level`` (prose wrapped)."""
        return _wrap(_section_markdown(self, level))


@dataclass(frozen=True)
class GuidePlacement:
    """What happened to one section in the recipe's guide."""

    section: ReproSection
    action: str  # inserted | updated | adopted | unchanged | skipped
    where: str
    reason: str = ""


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


# ------------------------------------------------------------------------------ knob classes


def knob_class(rules: Rules, kind: KnobKind, name: str) -> str:
    """The class of a flag or env var (``rules/knobs.yaml``): kernel, serving, accuracy,
    tuning, workload, harness or unclassified."""
    return str(rules.knob_class(kind, name))


# (classes, comment line) in the order a reader applies them; harness is never written.
_GROUPS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"kernel"}), "Kernel selection — required to match the benchmarked path."),
    (frozenset({"serving"}), "Serving settings of the benchmarked command."),
    (frozenset({"workload"}), "Workload settings of this scenario (agentic, prefix reuse …)."),
    (
        frozenset({"accuracy"}),
        "Benchmark-only — accuracy-sensitive; NOT part of the default command.",
    ),
    (frozenset({"tuning"}), "Benchmark-only — throughput tuning; NOT part of the default command."),
    (frozenset({"unclassified"}), "Not classified in rules/knobs.yaml — check before use."),
)
_DELTA_GROUPS: tuple[tuple[frozenset[str], str], ...] = (
    (
        frozenset({"kernel", "serving", "image"}),
        "Kernel selection and serving — required to match the benchmarked path:",
    ),
    (frozenset({"workload"}), "Workload settings of this scenario:"),
    (
        frozenset({"accuracy", "tuning", "unclassified"}),
        "Benchmark-only — accuracy-sensitive / tuning; NOT part of the default command:",
    ),
)


# ------------------------------------------------------------------------------ building


def section_points(keys: Sequence[Any]) -> list[SectionPoint]:
    """Every mapped launch line of the run's keys (``KeyResult``s)."""
    out: list[SectionPoint] = []
    for found in keys:
        for result in found.points:
            if result.status not in ("represents", "context", "other-point"):
                continue
            if result.profile is None or result.launch is None:
                continue
            out.append(SectionPoint(found.key.key, result.profile, result.launch, result.status))
    return out


def block_id(profile: Profile, scenario: str) -> str:
    return f"{profile.variant}.{profile.hardware}.{scenario}"


def build_sections(
    points: Sequence[SectionPoint],
    recipes: RecipesRepo,
    rules: Rules,
    head: BenchRepo,
    *,
    bench_ref: str,
    bench_url: str | None,
    head_sha: str,
    evidence: EvidenceReport | None,
) -> dict[str, list[ReproSection]]:
    """recipe path → its sections, from the points (``recipes`` as this PR leaves them)."""
    groups: dict[tuple[str, str, str, str], list[SectionPoint]] = {}
    for item in points:
        slot = (
            item.profile.recipe_path,
            item.profile.variant,
            item.profile.hardware,
            item.launch.point.scenario,
        )
        groups.setdefault(slot, []).append(item)
    vram = taxonomy_vram(recipes)
    out: dict[str, list[ReproSection]] = {}
    for (path, _, _, _), members in sorted(groups.items()):
        if path not in recipes.by_path:
            continue
        section = _section(
            members, recipes, rules, head, vram, bench_ref, bench_url, head_sha, evidence
        )
        if section is not None:
            out.setdefault(path, []).append(section)
    return out


def _topology(item: SectionPoint) -> tuple[Any, ...]:
    p = item.launch.point
    return (p.dp_attn, p.tp, p.ep, p.pp, p.dcp, p.pcp, p.spec_decoding, p.kv_offloading or "")


def _topology_label(item: SectionPoint) -> str:
    p = item.launch.point
    parts = [f"DP{p.tp} (DP attention)" if p.dp_attn else f"TP{p.tp}"]
    if p.ep > 1:
        parts.append(f"EP{p.ep}")
    if p.pp > 1:
        parts.append(f"PP{p.pp}")
    if p.spec_decoding != "none":
        parts.append(p.spec_decoding.upper())
    if p.kv_offloading and p.kv_offloading != "none":
        parts.append(f"KV offload {p.kv_offloading}")
    return " + ".join(parts)


def _section(
    members: Sequence[SectionPoint],
    recipes: RecipesRepo,
    rules: Rules,
    head: BenchRepo,
    vram: Mapping[str, float],
    bench_ref: str,
    bench_url: str | None,
    head_sha: str,
    evidence: EvidenceReport | None,
) -> ReproSection | None:
    first = members[0]
    profile, launch = first.profile, first.launch
    topologies: dict[tuple[Any, ...], list[SectionPoint]] = {}
    for item in members:
        topologies.setdefault(_topology(item), []).append(item)
    commands: list[ReproCommand] = []
    for _, items in sorted(topologies.items(), key=lambda kv: kv[0]):
        command = _command(items, recipes, rules, head, vram)
        if command is not None:
            commands.append(command)
    if not commands:
        return None
    keys = tuple(dict.fromkeys(m.key for m in members))
    hw = hw_label(recipes, profile.hardware)
    precision = launch.precision.upper() if launch.precision else ""
    bench_name = bench_ref.split("#", 1)[0].rsplit("/", 1)[-1] or "benchmark"
    scenario = "agentic" if launch.point.scenario == "agentic-coding" else ""
    heading = " ".join(
        part
        for part in (
            f"{precision} benchmark reproduction" if precision else "Benchmark reproduction",
            f"({bench_name} {hw}{' ' + scenario if scenario else ''} sweep)",
        )
    )
    variant_words = [] if profile.variant == "default" else [profile.variant]
    features = ", ".join(
        f"{f}={profile.modes[f]}" if f in profile.modes else f for f in profile.features
    )
    label = f"{md.text(hw)} {md.code(profile.strategy)}" + (
        f" ({md.code(features)})" if features else ""
    )
    return ReproSection(
        block_id=block_id(profile, launch.point.scenario),
        recipe_path=profile.recipe_path,
        variant=profile.variant,
        hardware=profile.hardware,
        scenario=launch.point.scenario,
        keys=keys,
        heading=heading,
        image=launch.image,
        commands=tuple(commands),
        evidence=tuple(_evidence_lines(evidence, head, keys, profile, rules)),
        after=(*variant_words, profile.hardware),
        bench_ref=bench_ref,
        bench_url=bench_url,
        head_sha=head_sha,
        recipe_label=label,
    )


def _command(
    items: Sequence[SectionPoint],
    recipes: RecipesRepo,
    rules: Rules,
    head: BenchRepo,
    vram: Mapping[str, float],
) -> ReproCommand | None:
    evals = [i for i in items if i.launch.arm == "eval"]
    real = [i for i in items if i.launch.arm != "eval" and not synthetic_acceptance(i.launch.argv)]
    synthetic = [i for i in items if i.launch.arm != "eval" and synthetic_acceptance(i.launch.argv)]
    chosen = (evals or real or synthetic)[0]
    launch = chosen.launch
    if evals:
        arm = "the eval arm (real acceptance)" if synthetic else "the eval arm"
    elif real:
        arm = "the throughput arms"
    else:
        arm = "the throughput arms, with real acceptance restored"
    argv = list(launch.argv)
    rules_by_index = _conc_rules([i.launch for i in items])
    dropped: tuple[str, ...] = ()
    if synthetic_acceptance(argv):
        argv, fields = _restore_acceptance(argv)
        dropped = tuple(fields)
    restored = replace(launch, argv=tuple(argv))
    try:
        comparison = compare(recipes, rules, restored, chosen.profile, vram=vram)
    except RecipeSyncError:
        return None
    harness: list[str] = []
    display = [(token, _display(token)) for token in argv]
    for index, rule in rules_by_index.items():
        if index < len(display):
            display[index] = (display[index][0], rule[1])
    for diff in comparison.report.diffs:
        harness_flag = diff.kind == "flag" and diff.verdict in _HARNESS_VERDICTS
        if harness_flag and diff.bench_tokens and _remove(display, diff.bench_tokens):
            harness.append(diff.flag)
    front_end = {rule.flag for rule in rules.flags.front_end if rule.value is None}
    for flag in sorted(front_end):
        while _remove_flag(display, flag):
            harness.append(flag)
    model = comparison.command.argv[2] if len(comparison.command.argv) > 2 else launch.model
    tokens = [shown for _, shown in display]
    if len(tokens) > 2:
        tokens[2] = model
    run_time = tuple(
        dict.fromkeys(
            (display[i - 1][0].split("=", 1)[0], m.group(1))
            for i in range(3, len(display))
            for m in _OPAQUE.finditer(display[i][0])
            if display[i - 1][0].startswith("-")
        )
    )
    env: list[tuple[str, str, str]] = []
    harness_env = {
        d.flag
        for d in comparison.report.diffs
        if d.kind == "env" and d.verdict in _HARNESS_VERDICTS
    }
    for name, value in launch.env.items():
        cls = knob_class(rules, "env", name)
        if name in harness_env or cls == "harness" or ":opaque:" in value:
            harness.append(name)
            continue
        env.append((cls, name, value))
    lines = ["vllm serve " + tokens[2], *_lines(tokens[3:])] if len(tokens) > 2 else []
    router = None
    if launch.point.dp_attn and launch.script:
        router = router_command(head.source, launch.script, {**launch.job_env, **launch.env})
    concs = tuple(sorted({i.launch.point.conc for i in items}))
    conc_rules = tuple(
        dict.fromkeys((flag, text) for flag, (text, _) in _rule_texts(rules_by_index, argv))
    )
    synthetic_fields: tuple[str, ...] = ()
    if synthetic:
        _, fields = _restore_acceptance(synthetic[0].launch.argv)
        synthetic_fields = tuple(f"{k}: {json.dumps(v)}" for k, v in fields.items())
    return ReproCommand(
        synthetic_arms=tuple(sorted({i.launch.point.conc for i in synthetic})),
        synthetic_fields=synthetic_fields,
        topology=_topology_label(chosen),
        arm=arm,
        env=tuple(env),
        lines=tuple(lines),
        router=router,
        conc_rules=conc_rules,
        concs=concs,
        dropped_synthetic=dropped,
        deltas=tuple(_deltas(comparison, rules, dict(_rule_texts(rules_by_index, argv)))),
        harness_left_out=tuple(dict.fromkeys(harness)),
        run_time=run_time,
    )


def _display(token: str) -> str:
    """A token as a shell word; run-time placeholders become ``"$NAME"``."""
    if _OPAQUE.search(token):
        return '"' + _OPAQUE.sub(lambda m: "$" + m.group(1), token) + '"'
    return quote_value(token)


def _remove(display: list[tuple[str, str]], tokens: Sequence[str]) -> bool:
    raw = [token for token, _ in display]
    n = len(tokens)
    for start in range(3, len(raw) - n + 1):
        if tuple(raw[start : start + n]) == tuple(tokens):
            del display[start : start + n]
            return True
    return False


def _remove_flag(display: list[tuple[str, str]], flag: str) -> bool:
    """Remove ``flag`` (``--f v`` or ``--f=v``) from the display tokens."""
    raw = [token for token, _ in display]
    for index in range(3, len(raw)):
        if option_name(raw[index]) != flag:
            continue
        has_value = "=" not in raw[index] and value_at(raw, index) is not None
        del display[index : index + (2 if has_value else 1)]
        return True
    return False


def _lines(tokens: Sequence[str]) -> list[str]:
    """Flag + value per line; ``tokens`` are shell words already."""
    out: list[str] = []
    previous_is_flag = False
    for token in tokens:
        if token.startswith("-") and not token.startswith(("-'", '-"')):
            out.append(token)
            previous_is_flag = True
        elif previous_is_flag:
            out[-1] = f"{out[-1]} {token}"
            previous_is_flag = False
        else:
            out.append(token)
    return out


def _conc_rules(launches: Sequence[LaunchLine]) -> dict[int, tuple[str, str]]:
    """argv index → (rule text, shell word) for values proportional to CONC across points."""
    if len({launch.point.conc for launch in launches}) < 2:
        return {}
    if len({len(launch.argv) for launch in launches}) != 1:
        return {}
    out: dict[int, tuple[str, str]] = {}
    for index in range(3, len(launches[0].argv)):
        values = [launch.argv[index] for launch in launches]
        if len(set(values)) == 1:
            continue
        try:
            pairs = [
                (launch.point.conc, int(value))
                for launch, value in zip(launches, values, strict=True)
            ]
        except ValueError:
            continue
        ratios = {value / conc for conc, value in pairs if conc}
        if len(ratios) != 1:
            continue
        ratio = ratios.pop()
        if ratio == 1:
            out[index] = ("CONC", '"$CONC"')
        elif ratio == int(ratio):
            out[index] = (f"{int(ratio)} × CONC", f'"$(({int(ratio)} * CONC))"')
        elif (1 / ratio) == int(1 / ratio):
            out[index] = (f"CONC / {int(1 / ratio)}", f'"$((CONC / {int(1 / ratio)}))"')
    return out


def _rule_texts(
    rules_by_index: Mapping[int, tuple[str, str]], argv: Sequence[str]
) -> list[tuple[str, tuple[str, str]]]:
    out = []
    for index, rule in sorted(rules_by_index.items()):
        flag = argv[index - 1] if index - 1 >= 0 and argv[index - 1].startswith("-") else "?"
        out.append((flag, rule))
    return out


def _restore_acceptance(argv: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
    """The argv with synthetic-acceptance fields removed from (the first)
    ``--speculative-config``, and those fields with their values."""
    out = list(argv)
    for index, token in enumerate(out):
        name = option_name(token)
        if name.replace("_", "-") != "--speculative-config":
            continue
        inline = "=" in token
        raw = value_at(out, index) or ""
        try:
            config = json.loads(raw)
        except ValueError:
            return out, {}
        if not isinstance(config, dict):
            return out, {}
        dropped = [k for k in config if k in SYNTHETIC_KEYS]
        if config.get("rejection_sample_method") == "synthetic":
            dropped.append("rejection_sample_method")
        kept = {k: v for k, v in config.items() if k not in dropped}
        compact = ", " not in raw and ": " not in raw
        text = json.dumps(kept, separators=(",", ":") if compact else (", ", ": "))
        if inline:
            out[index] = f"{name}={text}"
        else:
            out[index + 1] = text
        return out, {k: config[k] for k in dropped}
    return out, {}


def _tokens(diff_tokens: Sequence[str]) -> str:
    """Tokens as a shell line; a JSON value a script wrote over several lines on one line."""
    return " ".join(_display(one_line_json(t)) if i else t for i, t in enumerate(diff_tokens))


def _json_field_delta(comparison: Comparison, diff: FlagDiff) -> str | None:
    """The bullet for one field of a config the recipe's command spells as a whole JSON:
    a dotted ``--x.key v`` added to that command would make vLLM discard the JSON (JSON and
    dotted forms are not merged), so the field is set or removed inside it. None otherwise."""
    holder = json_holder(comparison.command.args, diff)
    if holder is None or holder.flag is None:
        return None
    key = diff.flag.split(".", 1)[1]
    if diff.verdict is Verdict.RECIPE_ONLY or not diff.bench_tokens:
        return (
            f"Remove {md.code(key)} from the {md.code(holder.flag)} JSON (the benchmark "
            "does not set it)."
        )
    before = ""
    if diff.recipe_value is not None:
        before = f" (the recipe's command: {md.code(_compact(diff.recipe_value))})"
    value = md.code(_compact(diff.bench_value))
    return f"Set {md.code(key)} to {value} in the {md.code(holder.flag)} JSON{before}."


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _deltas(
    comparison: Comparison, rules: Rules, conc: Mapping[str, tuple[str, str]] | None = None
) -> list[tuple[str, str]]:
    """(class, bullet): what to change in the recipe's command to get the benchmark's."""
    out: list[tuple[str, str]] = []
    env_add: dict[str, list[str]] = {}
    for diff in comparison.report.diffs:
        if diff.kind == "model":
            continue
        if diff.kind == "image":
            # a recipe that floats on the default tag keeps floating (the image is cited)
            if diff.verdict in _DRIFT and not comparison.floating_image:
                out.append(
                    (
                        "image",
                        f"Run on {md.code(str(diff.bench_value))} (the recipe's command: "
                        f"{md.code(str(diff.recipe_value))}).",
                    )
                )
            continue
        cls = knob_class(rules, "env" if diff.kind == "env" else "flag", diff.flag)
        if cls == "harness":
            continue
        if diff.kind == "env":
            if diff.verdict is Verdict.DIFFERS and diff.bench_value is not None:
                if diff.recipe_value is None:
                    env_add.setdefault(cls, []).append(md.code(f"{diff.flag}={diff.bench_value}"))
                else:
                    out.append(
                        (
                            cls,
                            f"Export {md.code(f'{diff.flag}={diff.bench_value}')} (the recipe "
                            f"sets {md.code(str(diff.recipe_value))}).",
                        )
                    )
            elif diff.verdict is Verdict.RECIPE_ONLY:
                out.append((cls, f"The benchmark does not set {md.code(diff.flag)}."))
            continue
        unknown = diff.verdict is Verdict.UNKNOWN and bool(diff.bench_tokens)
        if diff.verdict not in _DRIFT and not unknown:
            continue
        inside = _json_field_delta(comparison, diff)
        if inside is not None and (conc or {}).get(diff.flag) is None:
            out.append((cls, inside))
            continue
        bench = _tokens(bench_field_tokens(diff))
        recipe = _tokens(diff.recipe_tokens)
        rule = (conc or {}).get(diff.flag)
        if rule is not None and diff.bench_tokens:
            bench = f"{diff.bench_tokens[0]} {rule[1]}"
            out.append(
                (
                    cls,
                    f"Add {md.code(bench)}: {md.code(diff.flag)} = {rule[0]}, the script's rule "
                    f"(the recipe's command: {md.code(recipe) if recipe else 'vLLM default'}).",
                )
            )
            continue
        if unknown and not diff.recipe_tokens:
            out.append((cls, f"Add {md.code(bench)} (the recipe's command does not set it)."))
            continue
        if diff.verdict is Verdict.RECIPE_ONLY or not diff.bench_tokens:
            out.append((cls, f"Drop {md.code(recipe)} (the benchmark does not pass it)."))
        elif diff.recipe_tokens:
            out.append((cls, f"Use {md.code(bench)} (the recipe's command has {md.code(recipe)})."))
        else:
            out.append((cls, f"Add {md.code(bench)}{_default_note(diff)}."))
    for cls, names in env_add.items():
        out.append((cls, "Export " + ", ".join(names) + " (below)."))
    return out


def _default_note(diff: FlagDiff) -> str:
    match = re.search(r"resolves to (?:the default )?(\S+)", diff.reason)
    if match is None:
        return ""
    value = short_list(match.group(1))
    return f" (the recipe's command leaves it to vLLM: {md.text(value)} here)"


def short_list(text: str, keep: int = 3) -> str:
    """A long JSON list as its first items, the last and the count (vLLM's default capture
    sizes are 51 numbers); anything else as it is."""
    try:
        items = json.loads(text)
    except ValueError:
        return text
    if not isinstance(items, list) or len(items) <= 2 * keep:
        return text
    head = ", ".join(json.dumps(item) for item in items[:keep])
    return f"[{head}, …, {json.dumps(items[-1])}] ({len(items)} values)"


def _evidence_lines(
    report: EvidenceReport | None,
    head: BenchRepo,
    keys: Sequence[str],
    profile: Profile,
    rules: Rules,
) -> list[str]:
    if report is None:
        return []
    from bot.align.evidence import evidence_for  # the planner's own rule for the cited job

    out: list[str] = []
    for key in keys:
        cited, _, _ = evidence_for(report, head, key, profile, rules)
        if cited is not None:
            out.append(_evidence_sentence(cited))
    return out


def _evidence_sentence(item: Evidence) -> str:
    run = md.link(str(item.run_id), item.run_html_url)
    order = {"strict-match": 0, "flexible-extract": 1}
    groups: dict[tuple[str, int | None], list[Any]] = {}
    for figure in sorted(item.figures, key=lambda f: order.get(f.filter or "", 2)):
        groups.setdefault((figure.task, figure.n_shot), []).append(figure)
    parts = []
    for (task, shots), figures in groups.items():
        values = []
        for figure in figures:
            value = f"{md.text(figure.filter or figure.metric)} {figure.value:.4f}"
            if figure.stderr is not None:
                value += f" ± {figure.stderr:.4f}"
            values.append(value)
        verdicts = {figure.passed for figure in figures}
        word = {True: "PASS", False: "FAIL", None: "not judged"}[
            verdicts.pop() if len(verdicts) == 1 else None
        ]
        name = md.text(task) + (f" {shots}-shot" if shots is not None else "")
        parts.append(f"{name} — {', '.join(values)}: {word}")
    joined = "; ".join(parts) if parts else "no eval figures in the log"
    return f"Validated: run {run} (attempt {item.attempt}), job {md.code(item.job_name)}: {joined}."


# ------------------------------------------------------------------------------ Markdown


WRAP = 88


def _wrap(lines: Sequence[str]) -> list[str]:
    """Paragraphs and list items wrapped at :data:`WRAP` columns; fences and headings kept."""
    out: list[str] = []
    fence: str | None = None
    for line in lines:
        stripped = line.lstrip()
        if fence is not None:
            out.append(line)
            if stripped.startswith(fence) and not stripped.strip("`~"):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            out.append(line)
            continue
        if len(line) <= WRAP or stripped.startswith(("#", "<!--", "|")):
            out.append(line)
            continue
        found = re.match(r"^(\s*- )", line)
        bullet = found.group(1) if found else ""
        out.extend(
            textwrap.wrap(
                line[len(bullet) :],
                WRAP,
                initial_indent=bullet,
                subsequent_indent=" " * len(bullet),
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return out


def _concs(values: Sequence[int]) -> str:
    return ", ".join(str(v) for v in values)


def _section_markdown(section: ReproSection, level: int) -> list[str]:
    plain_ref = re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", section.bench_ref)
    label = section.bench_ref if plain_ref else md.text(section.bench_ref)
    ref = md.link(label, section.bench_url)
    keys = ", ".join(md.code(k) for k in section.keys)
    at = f" at {md.code(section.head_sha[:12])}" if section.head_sha else ""
    scenario = section.scenario.replace("-", " ")
    out = [
        f"{'#' * level} {section.heading}",
        "",
        f"The benchmark lane {keys} of {ref}{at} ({scenario}) is a benchmark configuration, "
        f"not the recipe default. To reproduce it, start from the recipe's "
        f"{section.recipe_label} command and apply the deltas below. This section is "
        f"generated from the benchmark's launch lines and kept in sync by recipe-sync.",
    ]
    for command in section.commands:
        out.extend(_command_markdown(command))
    out.extend(["", f"Image the benchmark ran: {md.code(section.image)}."])
    if section.evidence:
        out.append("")
        out.extend(section.evidence)
    return out


def _command_markdown(command: ReproCommand) -> list[str]:
    out = [
        "",
        f"**{md.text(command.topology)}** — the command of {command.arm}; the sweep ran "
        f"concurrency {_concs(command.concs)}.",
    ]
    if command.synthetic_arms and not command.dropped_synthetic:
        fields = ", ".join(md.code(f) for f in command.synthetic_fields)
        out.append("")
        out.append(
            f"The throughput arms (concurrency {_concs(command.synthetic_arms)}) measure with "
            f"synthetic acceptance ({fields}): draft tokens are accepted at a preset rate, so "
            "their throughput is not what real verification gives. The command below is the "
            "eval arm's, with real rejection."
        )
    if command.dropped_synthetic:
        fields = ", ".join(md.code(f) for f in command.dropped_synthetic)
        out.append("")
        out.append(
            "The benchmark's throughput arms measure with synthetic acceptance (draft tokens "
            "accepted at a preset rate); the command below drops "
            f"{fields} from {md.code('--speculative-config')}, so drafts are verified for real."
        )
    out.append("")
    grouped = [
        (title, [text for cls, text in command.deltas if cls in classes])
        for classes, title in _DELTA_GROUPS
    ]
    grouped = [(title, items) for title, items in grouped if items]
    if not grouped:
        out.append("- No serving difference from the recipe's command.")
    for title, items in grouped:
        out.append(f"- {title}")
        out.extend(f"  - {item}" for item in items)
    for flag, rule in command.conc_rules:
        if any(md.code(flag) in text for _, text in command.deltas):
            continue
        out.append(
            f"- {md.code(flag)} = {rule}: the script derives it from the concurrency; set "
            f"{md.code('CONC')} to the concurrency you run."
        )
    for flag, name in command.run_time:
        out.append(
            f"- {md.code(flag)}: the script computes it when it runs; set {md.code(name)} "
            "before running the command."
        )
    if command.harness_left_out:
        names = ", ".join(md.code(n) for n in command.harness_left_out)
        out.append(f"- Left out (benchmark harness, front end): {names}.")
    script: list[str] = []
    for classes, title in _GROUPS:
        exports = [(n, v) for c, n, v in command.env if c in classes]
        if not exports:
            continue
        if script:
            script.append("")
        script.append(f"# {title}")
        script.extend(f"export {n}={quote_value(v)}" for n, v in exports)
    if command.conc_rules:
        if script:
            script.append("")
        script.append(f"CONC={command.concs[-1]}  # the sweep ran {_concs(command.concs)}")
    if script:
        script.append("")
    script.extend(_continued(command.lines))
    out.extend(["", *md.fenced("\n".join(script), "bash").split("\n")])
    if command.router is not None:
        out.extend(
            [
                "",
                "The benchmark puts a router in front of the DP ranks:",
                "",
                *md.fenced(
                    "\n".join(_continued(_lines(command.router[1:]), command.router[0])), "bash"
                ).split("\n"),
            ]
        )
    return out


def _continued(lines: Sequence[str], program: str | None = None) -> list[str]:
    items = [program, *lines] if program else list(lines)
    return [
        (line if i == 0 else "  " + line) + (" \\" if i < len(items) - 1 else "")
        for i, line in enumerate(items)
    ]


# ------------------------------------------------------------------------------ guide drift

_TP_FLAGS = ("--tensor-parallel-size", "-tp")
_CITED_CLASSES = frozenset({"kernel", "serving", "accuracy", "tuning", "workload", "unclassified"})
_SERVING_CLASSES = frozenset({"kernel", "serving", "accuracy"})
_DP_FLAGS = ("--data-parallel-size", "-dp")


def _int(value: str | None, default: int = 1) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _model_ids(recipes: RecipesRepo, path: str) -> dict[str, str]:
    """model id → variant key of a recipe."""
    recipe = recipes.by_path[path]
    out = {recipe.hf_id: "default"}
    for key, variant in recipe.variants.items():
        if isinstance(variant, Mapping) and variant.get("model_id"):
            out[str(variant["model_id"])] = str(key)
    return out


def _names_of(recipes: RecipesRepo, hw: str) -> set[str]:
    profile = recipes.hardware.get(hw)
    names = {hw.lower()}
    if profile is not None and profile.data.get("display_name"):
        names.add(str(profile.data["display_name"]).lower())
    return names


def _named(text: str, names: set[str]) -> bool:
    return any(re.search(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])", text) for n in names)


def hardware_named(context: str, recipes: RecipesRepo, candidates: Sequence[str]) -> list[str]:
    """The candidates a guide command documents, from its heading path: the GPUs it names;
    else, when it names no GPU at all, the GPU generation (``Blackwell``) it names; else the
    brand (``NVIDIA``, ``AMD``/``ROCm``). A heading that names nothing documents no GPU."""
    text = context.lower()
    named = [hw for hw in candidates if _named(text, _names_of(recipes, hw))]
    if named:
        return named
    if any(_named(text, _names_of(recipes, hw)) for hw in recipes.hardware):
        return []  # it documents other GPUs
    by_generation = [
        hw
        for hw in candidates
        if hw in recipes.hardware
        and recipes.hardware[hw].generation not in ("amd", "")
        and _named(text, {recipes.hardware[hw].generation.lower()})
    ]
    if by_generation:
        return by_generation
    brands = {"nvidia": {"nvidia", "cuda"}, "amd": {"amd", "rocm"}}
    return [
        hw
        for hw in candidates
        if hw in recipes.hardware
        and _named(text, brands.get(recipes.hardware[hw].brand_lower, set()))
    ]


def guide_drift(
    text: str,
    path: str,
    points: Sequence[SectionPoint],
    recipes: RecipesRepo,
    rules: Rules,
    *,
    bench_name: str = "InferenceX",
) -> list[GuideDrift]:
    """Each ``vllm serve`` of this recipe's model in the guide, compared with the launch line
    of the same variant, hardware (named in its headings) and parallelism."""
    try:
        guide = locate_guide(text, path)
    except GuideError:
        return []
    if guide is None:
        return []
    mine = [p for p in points if p.profile.recipe_path == path]
    if not mine:
        return []
    ids = _model_ids(recipes, path)
    hardware = list(dict.fromkeys(p.profile.hardware for p in mine))
    markdown = guide.markdown
    lines = markdown.splitlines()
    vram = taxonomy_vram(recipes)
    out: list[GuideDrift] = []
    for command in _serve_commands(markdown):
        variant = ids.get(command.model)
        if variant is None:
            continue
        named = hardware_named(command.context(), recipes, hardware)
        if not named:
            continue
        tp = _int(flag_value(command.argv, *_TP_FLAGS))
        dp = _int(flag_value(command.argv, *_DP_FLAGS))
        point = _matching_point(mine, variant, named, tp, dp)
        if point is None:
            continue
        section = _section_text(lines, command).lower()
        cites = any(name.lower() in section for name in (bench_name, "SemiAnalysis"))
        out.append(
            _drift_of(
                command, point, guide.file_line(command.line), path, cites, recipes, rules, vram
            )
        )
    return out


@functools.lru_cache(maxsize=256)
def _serve_commands(markdown: str) -> tuple[GuideCommand, ...]:
    """The guide's commands, parsed once per guide text (the audit asks per launch line)."""
    return tuple(serve_commands(markdown))


def _matching_point(
    points: Sequence[SectionPoint], variant: str, hardware: Sequence[str], tp: int, dp: int
) -> SectionPoint | None:
    def parallel(item: SectionPoint) -> tuple[int, int]:
        p = item.launch.point
        return (1, p.tp) if p.dp_attn else (p.tp, 1)

    found = [
        item
        for item in points
        if item.profile.variant == variant
        and item.profile.hardware in hardware
        and parallel(item) == (tp, dp)
    ]
    found.sort(
        key=lambda i: (
            i.launch.arm != "eval",
            synthetic_acceptance(i.launch.argv),
            -i.launch.point.conc,
        )
    )
    return found[0] if found else None


def _section_text(lines: Sequence[str], command: GuideCommand) -> str:
    start = command.heading.line if command.heading is not None else 0
    return "\n".join(lines[start : command.fence.end])


def _drift_of(
    command: GuideCommand,
    point: SectionPoint,
    line: int,
    path: str,
    cites: bool,
    recipes: RecipesRepo,
    rules: Rules,
    vram: Mapping[str, float],
) -> GuideDrift:
    holes = tuple(dict.fromkeys(command.placeholders))
    bench_argv = list(point.launch.argv)
    if synthetic_acceptance(bench_argv):
        bench_argv, _ = _restore_acceptance(bench_argv)
    bench_argv = list(without_flags(bench_argv, holes))
    guide_argv = without_flags(command.argv, holes)
    bench_argv[2] = guide_argv[2]  # the model is matched already (path vs hub id)
    env = {k: v for k, v in point.launch.env.items() if ":opaque:" not in v}
    report = diff_launch(
        LaunchSide(argv=tuple(bench_argv), env=env, image=None),
        LaunchSide(argv=guide_argv, env=dict(command.env), image=None),
        hardware=point.profile.hardware,
        rules=rules,
        taxonomy_vram=vram,
        recipe_min_version=recipe_min_version(recipes, point.profile),
    )
    # A section that cites the benchmark should reproduce it: every difference but the
    # harness's counts. Any other guide command is a serving example: tuning and workload
    # settings are the benchmark's own (what maintainers keep out of the default command).
    counted = _CITED_CLASSES if cites else _SERVING_CLASSES
    drift = tuple(
        d
        for d in report.diffs
        if (d.verdict in _DRIFT or (d.verdict is Verdict.UNKNOWN and not d.recipe_tokens))
        and d.kind in ("flag", "env")
        and knob_class(rules, "env" if d.kind == "env" else "flag", d.flag) in counted
    )
    return GuideDrift(
        recipe_path=path,
        heading=command.context(),
        line=line,
        hardware=point.profile.hardware,
        key=point.key,
        point=point.launch.point.label() + f" ({point.launch.arm})",
        diffs=drift,
        not_compared=holes,
        managed=command.managed is not None,
        cites_benchmark=cites,
        variant=point.profile.variant,
    )


# ------------------------------------------------------------------------------ placing


def heading_level(text: str, section: ReproSection, file: str) -> int:
    """The level of the section's heading: an existing block keeps its own; after the section
    that documents the same hardware, a subsection of a ``##`` or a sibling of a deeper one;
    elsewhere (before Troubleshooting, at the end) a ``##`` section."""
    guide = locate_guide(text, file)
    if guide is None:
        return 2
    md_lines = list(guide.lines)
    for block in managed_blocks(md_lines):
        if block.kind == KIND and block.id == section.block_id:
            for line in md_lines[block.start : block.end]:
                match = re.match(r"^(#{1,6}) ", line)
                if match:
                    return len(match.group(1))
    _, _, level = insertion_point(md_lines, headings(guide.markdown), section.after)
    if level is None:
        return 2
    return 3 if level <= 2 else level


def apply_sections(
    text: str,
    file: str,
    sections: Sequence[ReproSection],
    drift: Sequence[GuideDrift],
    policy: str,
    *,
    edited: bool = True,
) -> tuple[str, tuple[GuidePlacement, ...]]:
    """Put each section into the guide; a hand-written section that already documents this
    benchmark on this hardware is left alone (``report``) or replaced (``adopt``). When the
    recipe's nodes are not ``edited``, a new section is written only when the benchmark's
    command differs from the recipe's (an existing block is still kept in sync)."""
    placements: list[GuidePlacement] = []
    for section in sections:
        try:
            if locate_guide(text, file) is None:
                placements.append(GuidePlacement(section, "skipped", "", "the recipe has no guide"))
                continue
        except GuideError as err:
            placements.append(GuidePlacement(section, "skipped", "", str(err)))
            continue
        if not edited and not section.has_deltas and not _has_block(text, file, section):
            continue
        hand = [
            d
            for d in drift
            if not d.managed
            and d.cites_benchmark
            and (d.hardware, d.variant) == (section.hardware, section.variant)
        ]
        replace_lines = None
        if hand and not _has_block(text, file, section):
            if policy != "adopt":
                placements.append(
                    GuidePlacement(
                        section,
                        "skipped",
                        "",
                        f"the hand-written section “{hand[0].heading}” (line {hand[0].line}) "
                        "documents this benchmark; recipe-sync reports its drift and does not "
                        "rewrite it (policy guide_sections: report)",
                    )
                )
                continue
            replace_lines = _hand_section(text, file, hand[0])
        level = heading_level(text, section, file)
        try:
            edit = place_block(
                text,
                KIND,
                section.block_id,
                section.body(level),
                after=section.after,
                replace_lines=replace_lines,
                file=file,
            )
        except GuideError as err:
            placements.append(GuidePlacement(section, "skipped", "", str(err)))
            continue
        text = edit.text
        placements.append(GuidePlacement(section, edit.action, edit.where))
    return text, tuple(placements)


def _has_block(text: str, file: str, section: ReproSection) -> bool:
    guide = locate_guide(text, file)
    return guide is not None and any(
        b.kind == KIND and b.id == section.block_id for b in managed_blocks(guide.lines)
    )


def _hand_section(text: str, file: str, drift: GuideDrift) -> tuple[int, int] | None:
    """Markdown lines [a, b) of the hand-written section holding ``drift``'s command."""
    guide = locate_guide(text, file)
    if guide is None:
        return None
    md_line = drift.line - guide.start - 1
    heads = [h for h in headings(guide.markdown) if h.line <= md_line]
    if not heads:
        return None
    head = heads[-1]
    end = section_end(guide.lines, headings(guide.markdown), head)
    return head.line, end
