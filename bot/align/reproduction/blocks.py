"""A reproduction section as the guide's Markdown (wrapped prose, one flag per command line)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from bot import markdown as md
from bot.align.reproduction.model import ReproCommand, ReproSection
from bot.align.reproduction.sections import IN_RECIPE, command_lines, shell_word
from bot.recipes.command_text import quote_value

# (classes, comment line) in the order a reader applies them; harness is never written.
_GROUPS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({IN_RECIPE}), "Already in the recipe's command (the same values)."),
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
    (frozenset({IN_RECIPE}), "Already in the recipe's command (the same values)."),
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


WRAP = 88


def wrap(lines: Sequence[str]) -> list[str]:
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


def section_markdown(section: ReproSection, level: int) -> list[str]:
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
        out.extend(_command_markdown(command, section.recipe_label))
    out.extend(["", f"Image the benchmark ran: {md.code(section.image)}."])
    if section.evidence:
        out.append("")
        out.extend(section.evidence)
    return out


def command_text(section: ReproSection, command: ReproCommand) -> list[str]:
    """One command's Markdown as the section writes it, before wrapping (the consistency
    check reads its statements back)."""
    return _command_markdown(command, section.recipe_label)


def _command_markdown(command: ReproCommand, start: str) -> list[str]:
    # a command of another strategy than the section's says which recipe command its
    # deltas are from: "start from" one command and deltas from another cannot both hold
    other = (
        f" Its deltas are from the recipe's {command.base} command."
        if command.base and command.base != start
        else ""
    )
    out = [
        "",
        f"**{md.text(command.topology)}** — the command of {command.arm}; the sweep ran "
        f"concurrency {_concs(command.concs)}.{other}",
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
    if command.conc_rules or command.conc_values:
        if script:
            script.append("")
        script.append(f"CONC={command.concs[-1]}  # the sweep ran {_concs(command.concs)}")
    script.extend(_case_lines(command))
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
                    "\n".join(_continued(command_lines(command.router[1:]), command.router[0])),
                    "bash",
                ).split("\n"),
            ]
        )
    return out


def _case_lines(command: ReproCommand) -> list[str]:
    """One ``case`` per value the script computes per concurrency: each CONC gets its own."""
    out: list[str] = []
    for flag, variable, values in command.conc_values:
        out.append(f'case "$CONC" in  # {flag} as the script computes it per concurrency')
        out.extend(f"  {conc}) {variable}={shell_word(value)} ;;" for conc, value in values)
        out.append("esac")
    return out


def _continued(lines: Sequence[str], program: str | None = None) -> list[str]:
    items = [program, *lines] if program else list(lines)
    return [
        (line if i == 0 else "  " + line) + (" \\" if i < len(items) - 1 else "")
        for i, line in enumerate(items)
    ]


def section_body(section: ReproSection, level: int) -> list[str]:
    """The block's Markdown lines with its heading at ``level`` (prose wrapped)."""
    return wrap(section_markdown(section, level))
