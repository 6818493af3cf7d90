"""A reproduction section as the guide's Markdown (wrapped prose, one flag per command line)."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from bot import markdown as md
from bot.align.reproduction.model import ReproCommand, ReproSection
from bot.align.reproduction.sections import IN_RECIPE
from bot.recipes.command_text import quote_value
from bot.rules.knobs import KNOB_CLASSES, REPRO_GROUPS, ReproGroup
from bot.words import count

_RECIPE_GROUP = (frozenset({IN_RECIPE}), "Already in the recipe's command (the same values).")
# The titles describe, never require: every delta is a setting the recipe (as the PR leaves
# it) does not take, often one the PR only offered, so "required" would contradict the PR.
_DELTA_TITLES: dict[ReproGroup, str] = {
    "required": "Kernel selection and serving settings of the benchmarked command:",
    "workload": "Workload settings of this scenario:",
    "benchmark-only": "Benchmark-only — accuracy-sensitive / tuning; NOT part of the default "
    "command:",
}
# the image is a required delta though no knob class
_DELTA_EXTRA: dict[ReproGroup, frozenset[str]] = {"required": frozenset({"image"})}

# (classes, comment line) in the order a reader applies them, from rules/knobs.py's table:
# a class is exported under its own heading, its deltas listed under its group's title
_GROUPS: tuple[tuple[frozenset[str], str], ...] = (
    _RECIPE_GROUP,
    *(
        (frozenset({spec.cls}), spec.heading)
        for group in REPRO_GROUPS
        for spec in KNOB_CLASSES
        if spec.group == group
    ),
)
_DELTA_GROUPS: tuple[tuple[frozenset[str], str], ...] = (
    _RECIPE_GROUP,
    *(
        (
            frozenset(s.cls for s in KNOB_CLASSES if s.group == group)
            | _DELTA_EXTRA.get(group, frozenset()),
            _DELTA_TITLES[group],
        )
        for group in REPRO_GROUPS
    ),
)

# the title line of each group of deltas, as the block writes it
_GROUP_LINES = frozenset(f"- {title}" for _, title in _DELTA_GROUPS)

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


# a block a reader takes in at a glance (maintainers' own: ~25 lines): 40 with its markers
MAX_LINES = 36


def section_markdown(section: ReproSection, level: int) -> list[str]:
    """The block: what the lane is, its deltas from the recipe's command, the exports the
    recipe does not set, the image and the eval. No full command: the recipe renders its
    own right above, and a copy of it here would drift from the page."""
    plain_ref = re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", section.bench_ref)
    label = section.bench_ref if plain_ref else md.text(section.bench_ref)
    ref = md.link(label, section.bench_url)
    keys = ", ".join(md.code(k) for k in section.keys)
    at = f" at {md.code(section.head_sha[:12])}" if section.head_sha else ""
    scenario = section.scenario.replace("-", " ")
    head = [
        f"{'#' * level} {section.heading}",
        "",
        f"The benchmark lane {keys} of {ref}{at} ({scenario}) is a benchmark configuration, "
        f"not the recipe default. To reproduce it, start from the recipe's "
        f"{section.recipe_label} command and apply the deltas below. This section is "
        f"generated from the benchmark's launch lines and kept in sync by recipe-sync.",
    ]
    body: list[str] = []
    for command in section.commands:
        body.extend(_command_markdown(command, section.recipe_label))
    tail = ["", f"Image the benchmark ran: {md.code(section.image)}."]
    if section.also:
        tail.extend(["", f"The PR's other lanes on this hardware: {'; '.join(section.also)}."])
    if section.evidence:
        tail.append("")
        tail.extend(section.evidence)
    return _within(head, body, tail, section)


def _within(head: list[str], body: list[str], tail: list[str], section: ReproSection) -> list[str]:
    """At most :data:`MAX_LINES` wrapped lines: the body's last items give way first, and a
    line says how many, pointing at the launch that has them all."""
    if len(wrap([*head, *body, *tail])) <= MAX_LINES:
        return [*head, *body, *tail]
    ref = md.link(section.bench_ref, section.bench_url)
    kept = list(body)
    while kept:
        kept.pop()
        fences = [i for i, line in enumerate(kept) if line.startswith("```")]
        if len(fences) % 2:  # never leave a fence open: drop the unclosed block whole
            kept = kept[: fences[-1]]
        # nor a group's title without its items
        while kept and (not kept[-1].strip() or kept[-1] in _GROUP_LINES):
            kept.pop()
        dropped = _not_shown(body[len(kept) :], kept)
        # the last command's exports' block is gone: its bullets may not point at it
        fences = [i for i, line in enumerate(kept) if line.startswith("```")]
        after = fences[-1] + 1 if fences else 0
        kept[after:] = [line.replace(" (below).", ".") for line in kept[after:]]
        note = [
            "",
            f"{count(len(dropped), 'more setting')} of this lane "
            f"{'is' if len(dropped) == 1 else 'are'} not shown (a block is at most "
            f"{MAX_LINES} lines): {_names(dropped)}; the launch in {ref} has them all.",
        ]
        if not dropped:  # only a repetition gave way (the exports' block): nothing is hidden
            note = []
        if len(wrap([*head, *kept, *note, *tail])) <= MAX_LINES:
            return [*head, *kept, *note, *tail]
    return [*head, *tail]


def _not_shown(dropped: Sequence[str], kept: Sequence[str]) -> list[str]:
    """The settings among ``dropped`` lines a reader no longer sees, by name: a bullet's
    (the setting its first code span names), or an export's variable no kept bullet names
    (the block below the bullets repeats them)."""
    shown = "\n".join(kept)
    names: list[str] = []
    for line in dropped:
        item = line.lstrip()
        if item.startswith("export "):
            name = item[len("export ") :].partition("=")[0]
            if f"`{name}=" not in shown and f"`{name}`" not in shown:
                names.append(name)
        elif item.startswith("- ") and line not in _GROUP_LINES:
            names.append(_setting_named(item))
    return list(dict.fromkeys(names))


# a delta bullet's first code span: "Add `--x 1`", "Export `X=1`", "In the `--x` JSON: …"
_FIRST_SPAN = re.compile(r"(`+)\s?(.+?)\s?\1")


# names that are words, not a flag or a variable
_NOT_CODE = frozenset({"image", "another setting"})


def _setting_named(bullet: str) -> str:
    """The setting a delta bullet is about: its first code span's flag or variable, or the
    image ("Run on `…`")."""
    if bullet.startswith("- Run on "):
        return "image"
    found = _FIRST_SPAN.search(bullet)
    if found is None:
        return "another setting"
    return re.split(r"[\s=]", found.group(2), maxsplit=1)[0]


# at most this many names in the note: a reader looks the rest up in the launch it links
_NAMES_SHOWN = 6


def _names(names: Sequence[str]) -> str:
    """ "`--max-num-seqs`, `--block-size` and 3 more": the first few, the rest counted."""
    words = [name if name in _NOT_CODE else md.code(name) for name in names[:_NAMES_SHOWN]]
    rest = len(names) - _NAMES_SHOWN
    return ", ".join(words) + (f" and {rest} more" if rest > 0 else "")


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
        f"**{md.text(command.topology)}** — {command.arm}; the sweep ran concurrency "
        f"{_concs(command.concs)}.{other}",
    ]
    if command.synthetic_arms or command.dropped_synthetic:
        fields = command.dropped_synthetic or tuple(
            f.split(":", 1)[0] for f in command.synthetic_fields
        )
        out.append(
            "Its throughput arms accept drafts at a preset rate (synthetic "
            f"{', '.join(md.code(f) for f in fields)}); these deltas keep real verification."
        )
    out.append("")
    grouped = [
        (title, [text for cls, text in command.deltas if cls in classes])
        for classes, title in _DELTA_GROUPS
        if IN_RECIPE not in classes
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
    if command.router is not None:
        out.append("- The benchmark puts a `vllm-router` in front of the DP ranks.")
    script: list[str] = []
    for classes, title in _GROUPS:
        if IN_RECIPE in classes:
            continue  # the recipe's command already exports them alike
        exports = [(n, v) for c, n, v in command.env if c in classes]
        if not exports:
            continue
        if script:
            script.append("")
        script.append(f"# {title}")
        script.extend(f"export {n}={quote_value(v)}" for n, v in exports)
    if script:
        out.extend(["", *md.fenced("\n".join(script), "bash").split("\n")])
    return out


def section_body(section: ReproSection, level: int) -> list[str]:
    """The block's Markdown lines with its heading at ``level`` (prose wrapped)."""
    return wrap(section_markdown(section, level))
