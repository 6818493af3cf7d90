"""Guide-command drift: each hand-written ``vllm serve`` of the recipe's model in a shell
fence, mapped to a launch line by the hardware its headings name and its parallelism, diffed
under vLLM's CLI semantics."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from bot.align.compare import DRIFT, recipe_feature, recipe_min_version, taxonomy_vram
from bot.align.profile import synthetic_acceptance
from bot.align.reproduction.model import GuideDrift, SectionPoint
from bot.align.reproduction.sections import restore_acceptance
from bot.argv import flag_value, without_flags
from bot.recipes import RecipesRepo
from bot.recipes.guide import (
    GuideCommand,
    GuideError,
    locate_guide,
    serve_commands,
)
from bot.rules import Rules
from bot.rules.knobs import KNOB_CLASSES
from bot.vllm import LaunchSide, Verdict, diff_launch

_TP_FLAGS = ("--tensor-parallel-size", "-tp")


# what a section citing the benchmark reproduces, and what a serving example must match
_CITED_CLASSES = frozenset(spec.cls for spec in KNOB_CLASSES if spec.reproduced)
_SERVING_CLASSES = frozenset(spec.cls for spec in KNOB_CLASSES if spec.served)


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
        bench_argv, _ = restore_acceptance(bench_argv)
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
        if (d.verdict in DRIFT or (d.verdict is Verdict.UNKNOWN and not d.recipe_tokens))
        and d.kind in ("flag", "env")
        and rules.knob_class("env" if d.kind == "env" else "flag", d.flag) in counted
        and not recipe_feature(rules, d)  # a guide may show chat clients' parsers
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
