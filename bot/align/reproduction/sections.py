"""Building the reproduction sections: per (recipe file, variant, hardware, scenario) the
points that map to the recipe become one section — one ``vllm serve`` command per topology
(synthetic acceptance dropped, concurrency rules written as rules), its deltas from the
recipe's own command by knob class, its env exports, and the eval evidence."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from bot import markdown as md
from bot.align.compare import DRIFT, Comparison, compare, taxonomy_vram
from bot.align.nodes import (
    bench_field_tokens,
    hw_label,
    json_holder,
    one_line_json,
    only_host_copies,
)
from bot.align.profile import SYNTHETIC_KEYS, Profile, synthetic_acceptance
from bot.align.reproduction.defaults import (
    default_note,
    field_words,
    in_json,
    json_fields_note,
    run_time_note,
)
from bot.align.reproduction.model import ReproCommand, ReproSection, SectionPoint
from bot.argv import option_name, value_at
from bot.benchmarks import BenchRepo, LaunchLine, Point
from bot.benchmarks.router import router_command
from bot.errors import RecipeSyncError
from bot.evidence.model import Evidence, EvidenceReport
from bot.placeholders import PLACEHOLDER_RE, as_variables
from bot.recipes import RecipesRepo
from bot.recipes.command_text import quote_value
from bot.recipes.jsvalues import js_str
from bot.rules import Rules
from bot.rules.knobs import KNOB_SPECS, KnobClass
from bot.vllm import FlagDiff, Verdict

# the class of an env export the recipe's command already sets to the same value
IN_RECIPE = "recipe"

# Verdicts whose flags stay out of a copy-paste serve command (the harness's own settings).
_HARNESS_VERDICTS = frozenset({Verdict.FRONT_END_ONLY, Verdict.BENCHMARK_ONLY})


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


def block_id(profile: Profile) -> str:
    """One managed block per hardware: a newer lane on that GPU replaces it in place."""
    return profile.hardware


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
    """recipe path → its sections (``recipes`` as this PR leaves them): one per hardware,
    showing the lane a reader of the recipe most likely runs (the recipe's own profile,
    else the lane with the most points), the PR's other lanes on that GPU named."""
    groups: dict[tuple[str, str], dict[tuple[str, str], list[SectionPoint]]] = {}
    for item in points:
        lanes = groups.setdefault((item.profile.recipe_path, item.profile.hardware), {})
        lanes.setdefault((item.profile.variant, item.launch.point.scenario), []).append(item)
    vram = taxonomy_vram(recipes)
    out: dict[str, list[ReproSection]] = {}
    for (path, _), lanes in sorted(groups.items()):
        if path not in recipes.by_path:
            continue
        ordered = sorted(lanes.items(), key=lambda lane: (_rank(lane[1]), lane[0]))
        section = _section(
            ordered[0][1], recipes, rules, head, vram, bench_ref, bench_url, head_sha, evidence
        )
        if section is None:
            continue
        others = [c.topology for c in section.commands[1:]]
        others += [_lane_words(lane, members) for lane, members in ordered[1:]]
        shown = replace(section, commands=section.commands[:1], also=tuple(others))
        out.setdefault(path, []).append(shown)
    return out


def _rank(members: Sequence[SectionPoint]) -> tuple[bool, int]:
    """Lanes with the recipe's own profile first, then the larger."""
    return (not any(m.status == "represents" for m in members), -len(members))


def _lane_words(lane: tuple[str, str], members: Sequence[SectionPoint]) -> str:
    variant, scenario = lane
    topologies = ", ".join(dict.fromkeys(topology_label(m.launch.point) for m in members))
    where = [md.code(variant)] if variant != "default" else []
    where.append(scenario.replace("-", " "))
    return f"{' '.join(where)}: {topologies}"


def _topology(item: SectionPoint) -> tuple[Any, ...]:
    p = item.launch.point
    return (p.dp_attn, p.tp, p.ep, p.pp, p.dcp, p.pcp, p.spec_decoding, p.kv_offloading or "")


def _topology_label(item: SectionPoint) -> str:
    return topology_label(item.launch.point)


def topology_label(p: Point) -> str:
    """``TP8 + MTP + KV offload dram``: how a reproduction command names its topology."""
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
    # the recipe's own profile first: the block shows one command
    for _, items in sorted(topologies.items(), key=lambda kv: (_rank(kv[1])[0], kv[0])):
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
    label = recipe_label(profile, hw_label(recipes, profile.hardware))
    return ReproSection(
        block_id=block_id(profile),
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


def recipe_label(profile: Profile, hardware_label: str) -> str:
    """``MI355X `single_node_tp` (`tool_calling, reasoning`)``: the recipe command a
    reproduction command's deltas are computed from, in the section's words."""
    features = ", ".join(
        f"{f}={profile.modes[f]}" if f in profile.modes else f for f in profile.features
    )
    return f"{md.text(hardware_label)} {md.code(profile.strategy)}" + (
        f" ({md.code(features)})" if features else ""
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
    per_conc = _conc_values([i.launch for i in items], rules_by_index)
    dropped: tuple[str, ...] = ()
    if synthetic_acceptance(argv):
        argv, fields = restore_acceptance(argv)
        dropped = tuple(fields)
    restored = replace(launch, argv=tuple(argv))
    try:
        comparison = compare(recipes, rules, restored, chosen.profile, vram=vram)
    except RecipeSyncError:
        return None
    harness: list[str] = []
    display = [(token, shell_word(token)) for token in argv]
    for index, rule in rules_by_index.items():
        if index < len(display):
            display[index] = (display[index][0], rule[1])
    conc_values = _conc_variables(per_conc, argv, launch.env)
    for (index, _), (_, variable, _) in zip(sorted(per_conc.items()), conc_values, strict=True):
        display[index] = (display[index][0], f'"${variable}"')
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
            (option_name(display[i - 1][0]), m.group(1))
            for i in range(3, len(display))
            for m in PLACEHOLDER_RE.finditer(display[i][0])
            if display[i - 1][0].startswith("-")
        )
    )
    env: list[tuple[str, str, str]] = []
    harness_env = {
        d.flag
        for d in comparison.report.diffs
        if d.kind == "env" and d.verdict in _HARNESS_VERDICTS
    }
    recipe_env = {n: js_str(v) for n, v in comparison.command.env.items()}
    for name, value in launch.env.items():
        cls = rules.knob_class("env", name)
        if name in harness_env or not KNOB_SPECS[cls].reproduced or ":opaque:" in value:
            harness.append(name)
            continue
        # an export the recipe's command already sets alike is not a delta to apply: grouped
        # as the recipe's (never under "NOT part of the default command"), left out of blocks
        same = recipe_env.get(name) == value
        env.append((IN_RECIPE if same else cls, name, value))
    lines = ["vllm serve " + tokens[2], *command_lines(tokens[3:])] if len(tokens) > 2 else []
    router = None
    if launch.point.dp_attn and launch.script:
        router = router_command(head.source, launch.script, {**launch.job_env, **launch.env})
    concs = tuple(sorted({i.launch.point.conc for i in items}))
    conc_rules = tuple(
        dict.fromkeys((flag, text) for flag, (text, _) in _rule_texts(rules_by_index, argv))
    )
    synthetic_fields: tuple[str, ...] = ()
    if synthetic:
        _, fields = restore_acceptance(synthetic[0].launch.argv)
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
        deltas=tuple(
            _deltas(comparison, rules, dict(_rule_texts(rules_by_index, argv)), conc_values)
        ),
        harness_left_out=tuple(dict.fromkeys(harness)),
        run_time=run_time,
        conc_values=conc_values,
        base=recipe_label(chosen.profile, hw_label(recipes, chosen.profile.hardware)),
    )


def shell_word(token: str) -> str:
    """A token as a shell word; run-time placeholders become ``"$NAME"``."""
    if PLACEHOLDER_RE.search(token):
        return '"' + as_variables(token) + '"'
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


def _conc_values(
    launches: Sequence[LaunchLine], rules: Mapping[int, tuple[str, str]]
) -> dict[int, dict[int, str]]:
    """argv index → {conc: value} for values that differ across concurrencies without a
    rule (a capture-size list the script builds from CONC): one value per concurrency, so
    the command shown for a CONC never carries another concurrency's value."""
    concs = {launch.point.conc for launch in launches}
    argvs = [restore_acceptance(launch.argv)[0] for launch in launches]
    if len(concs) < 2 or len({len(argv) for argv in argvs}) != 1:
        return {}
    out: dict[int, dict[int, str]] = {}
    for index in range(4, len(argvs[0])):
        if index in rules or len({argv[index] for argv in argvs}) == 1:
            continue
        flags = {argv[index - 1] for argv in argvs}
        if len(flags) != 1 or not next(iter(flags)).startswith("-"):
            continue
        by_conc: dict[int, set[str]] = {}
        for launch, argv in zip(launches, argvs, strict=True):
            by_conc.setdefault(launch.point.conc, set()).add(argv[index])
        if any(len(values) != 1 for values in by_conc.values()):
            continue  # two arms of one concurrency disagree: no one value to show
        out[index] = {conc: values.pop() for conc, values in sorted(by_conc.items())}
    return out


def _conc_variables(
    per_conc: Mapping[int, Mapping[int, str]], argv: Sequence[str], env: Mapping[str, str]
) -> tuple[tuple[str, str, tuple[tuple[int, str], ...]], ...]:
    """(flag, shell variable, per-concurrency values) for :func:`_conc_values`."""
    out = []
    for index, values in sorted(per_conc.items()):
        flag = argv[index - 1]
        variable = re.sub(r"[^A-Z0-9]+", "_", flag.lstrip("-").upper()).strip("_")
        if variable in env or variable == "CONC":
            variable += "_BY_CONC"
        words = tuple((conc, one_line_json(value)) for conc, value in values.items())
        out.append((flag, variable, words))
    return tuple(out)


def _rule_texts(
    rules_by_index: Mapping[int, tuple[str, str]], argv: Sequence[str]
) -> list[tuple[str, tuple[str, str]]]:
    out = []
    for index, rule in sorted(rules_by_index.items()):
        flag = argv[index - 1] if index - 1 >= 0 and argv[index - 1].startswith("-") else "?"
        out.append((flag, rule))
    return out


def restore_acceptance(argv: Sequence[str]) -> tuple[list[str], dict[str, Any]]:
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
    return " ".join(shell_word(one_line_json(t)) if i else t for i, t in enumerate(diff_tokens))


def _json_field_delta(comparison: Comparison, diff: FlagDiff) -> str | None:
    """The bullet for one field of a config the recipe's command spells as a whole JSON:
    a dotted ``--x.key v`` added to that command would make vLLM discard the JSON (JSON and
    dotted forms are not merged), so the field is set or removed inside it. None otherwise."""
    holder = json_holder(comparison.command.args, diff)
    if holder is None or holder.flag is None:
        return None
    key = diff.flag.split(".", 1)[1]
    if diff.verdict is Verdict.RECIPE_ONLY or not diff.bench_tokens:
        return in_json(
            holder.flag, [field_words(key, removed=True) + " (the benchmark does not set it)"]
        )
    if diff.recipe_value is None:
        return in_json(holder.flag, [field_words(key, diff.bench_value)])
    return in_json(holder.flag, [field_words(key, diff.bench_value, diff.recipe_value)])


def _per_conc(
    diff: FlagDiff, conc_values: Sequence[tuple[str, str, tuple[tuple[int, str], ...]]]
) -> str | None:
    """The shell variable holding ``diff``'s flag per concurrency, when its value (or, for
    a field of a JSON flag, that field) differs between concurrencies; else None."""
    for flag, variable, words in conc_values:
        if diff.flag == flag:
            return variable
        if not diff.flag.startswith(flag + "."):
            continue
        seen = set()
        for _, raw in words:
            try:
                value: Any = json.loads(raw)
            except ValueError:
                return variable
            for key in diff.flag[len(flag) + 1 :].split("."):
                value = value.get(key) if isinstance(value, dict) else None
            seen.add(json.dumps(value, sort_keys=True))
        if len(seen) > 1:
            return variable
    return None


def _deltas(
    comparison: Comparison,
    rules: Rules,
    conc: Mapping[str, tuple[str, str]] | None = None,
    conc_values: Sequence[tuple[str, str, tuple[tuple[int, str], ...]]] = (),
) -> list[tuple[str, str]]:
    """(class, bullet): what to change in the recipe's command to get the benchmark's."""
    out: list[tuple[str, str]] = []
    env_add: dict[KnobClass, list[str]] = {}
    for diff in comparison.report.diffs:
        if diff.kind == "model":
            continue
        if diff.kind == "image":
            # a recipe that floats on the default tag keeps floating (the image is cited)
            if diff.verdict in DRIFT and not comparison.floating_image:
                out.append(
                    (
                        "image",
                        f"Run on {md.code(str(diff.bench_value))} (the recipe's command: "
                        f"{md.code(str(diff.recipe_value))}).",
                    )
                )
            continue
        cls = rules.knob_class("env" if diff.kind == "env" else "flag", diff.flag)
        if not KNOB_SPECS[cls].reproduced:
            continue
        if diff.kind == "env":
            # a value the script decides when it runs is unknown to the diff, yet the
            # benchmark set it: the reader is told to set it as the script does
            at_run_time = (
                run_time_note(str(diff.bench_value)) if diff.bench_value is not None else None
            )
            if diff.verdict in (Verdict.DIFFERS, Verdict.UNKNOWN) and at_run_time is not None:
                out.append((cls, f"Export {md.code(diff.flag)} as the script does: {at_run_time}."))
            elif diff.verdict is Verdict.DIFFERS and diff.bench_value is not None:
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
        if diff.verdict not in DRIFT and not unknown:
            continue
        if diff.recipe_value is not None and only_host_copies(diff.bench_value, diff.recipe_value):
            continue  # the recipe's value, read from a copy on the benchmark host
        variable = _per_conc(diff, conc_values)
        if variable is not None:
            out.append(
                (
                    cls,
                    f"Add {md.code(diff.flag)} as the script computes it for each concurrency "
                    f"({md.code('$' + variable)}: one value per {md.code('CONC')} in the "
                    "benchmark script).",
                )
            )
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
                    f"{'Use' if recipe else 'Add'} {md.code(bench)}: {md.code(diff.flag)} = "
                    f"{rule[0]}, the script's rule "
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
            fields = json_fields_note(diff.flag, diff.bench_value, diff.recipe_value)
            use = f"Use {md.code(bench)} (the recipe's command has {md.code(recipe)})."
            out.append((cls, fields or use))
        else:
            out.append((cls, f"Add {md.code(bench)}{default_note(diff)}."))
    for cls, names in env_add.items():
        out.append((cls, "Export " + ", ".join(names) + " (below)."))
    return out


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


def command_lines(tokens: Sequence[str]) -> list[str]:
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
