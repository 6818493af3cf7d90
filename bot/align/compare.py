"""Compare one launch line with the rendering of its recipe profile (docs/alignment.md §4)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bot.align.profile import Profile
from bot.benchmarks import LaunchLine
from bot.recipes import CommandRendering, RecipesRepo, Rendering, render
from bot.recipes.jsvalues import js_str
from bot.recipes.repo import per_gpu_memory
from bot.rules import KnobClass, Rules
from bot.rules.knobs import KNOB_CLASSES
from bot.vllm import DiffReport, FlagDiff, LaunchSide, Verdict, diff_launch

# Differences the recipe should close: a serving difference, or a flag only the recipe has.
DRIFT = frozenset({Verdict.DIFFERS, Verdict.RECIPE_ONLY})
# The point's parallelism decides whether it is the recipe's profile at all.
PARALLELISM_KEYS = frozenset(
    {
        "parallel.tensor_parallel_size",
        "parallel.data_parallel_size",
        "parallel.pipeline_parallel_size",
        "parallel.enable_expert_parallel",
    }
)
# Classes whose differences are recipe drift; the others are benchmark settings (reported,
# documented for reproduction or put behind a workload feature, never drift).
DRIFT_CLASSES = frozenset(spec.cls for spec in KNOB_CLASSES if spec.drift)


def knob_of(rules: Rules, diff: FlagDiff) -> KnobClass | None:
    """The knob class of a difference; None for the image (its own policy)."""
    if diff.kind == "image":
        return None
    if diff.key in PARALLELISM_KEYS:
        return KnobClass.SERVING
    return rules.knob_class("env" if diff.kind == "env" else "flag", diff.flag)


def taxonomy_vram(recipes: RecipesRepo) -> dict[str, float]:
    """Per-GPU memory (GB) of every taxonomy profile (:func:`bot.recipes.repo.per_gpu_memory`)."""
    return per_gpu_memory(recipes.hardware)


@dataclass(frozen=True)
class Comparison:
    launch: LaunchLine
    profile: Profile
    rendering: Rendering
    report: DiffReport
    # knob class per (kind, key) of each diff; filled by ``compare`` from rules/knobs.yaml
    classes: Mapping[tuple[str, str], KnobClass] = field(default_factory=dict)
    # (kind, key) of the differences that are rules/knobs.yaml ``recipe_features``
    features: frozenset[tuple[str, str]] = frozenset()

    def knob(self, diff: FlagDiff) -> KnobClass | None:
        """The class of ``diff`` (None: the image)."""
        if diff.kind == "image":
            return None
        return self.classes.get((diff.kind, diff.key), KnobClass.UNCLASSIFIED)

    @property
    def command(self) -> CommandRendering:
        return self.rendering.commands[0]

    @property
    def floating_image(self) -> bool:
        """The recipe pins no image for this profile: it floats on the default tag."""
        return (self.rendering.image_origin or "").startswith("default-image:")

    @property
    def differences(self) -> tuple[FlagDiff, ...]:
        """Every difference of the served configuration (flags, env, image), of any class.
        An image difference counts only when the recipe pins an image: a recipe that floats
        on the default tag (``latest``/``nightly``) deliberately tracks releases."""
        return tuple(
            d
            for d in self.report.diffs
            if d.verdict in DRIFT and not (d.kind == "image" and self.floating_image)
        )

    @property
    def drift(self) -> tuple[FlagDiff, ...]:
        """Differences the recipe should close: kernel, serving, accuracy, unclassified, and a
        pinned image (docs/alignment.md §4). A recipe feature the benchmark leaves out is
        not drift (:attr:`recipe_features`)."""
        return tuple(
            d
            for d in self.differences
            if self.knob(d) in DRIFT_CLASSES | {None} and not self._recipe_feature(d)
        )

    def _recipe_feature(self, diff: FlagDiff) -> bool:
        return diff.verdict == Verdict.RECIPE_ONLY and (diff.kind, diff.key) in self.features

    @property
    def recipe_features(self) -> tuple[FlagDiff, ...]:
        """Chat-client features only the recipe sets (tool calling, reasoning, chat
        template: rules/knobs.yaml ``recipe_features``): listed, never drift."""
        return tuple(d for d in self.differences if self._recipe_feature(d))

    @property
    def settings(self) -> tuple[FlagDiff, ...]:
        """Benchmark settings: tuning, workload and harness differences (not drift)."""
        return tuple(d for d in self.differences if self.knob(d) not in DRIFT_CLASSES | {None})

    @property
    def notes(self) -> tuple[str, ...]:
        """Differences reported but not counted as drift."""
        image = next((d for d in self.report.diffs if d.kind == "image"), None)
        if image is None or image.verdict not in DRIFT or not self.floating_image:
            return ()
        return (
            f"the recipe floats on {self.rendering.image} (no image pinned in the recipe); "
            f"the benchmark ran {self.launch.image}",
        )

    @property
    def unknown(self) -> tuple[FlagDiff, ...]:
        return tuple(d for d in self.report.diffs if d.verdict == Verdict.UNKNOWN)

    @property
    def parallelism_differs(self) -> tuple[FlagDiff, ...]:
        """Parallelism differences: this point is another point of the sweep."""
        return tuple(d for d in self.drift if d.key in PARALLELISM_KEYS)

    @property
    def aligned(self) -> bool:
        return not self.drift


def recipe_side(rendering: Rendering) -> LaunchSide:
    command = rendering.commands[0]
    env = {name: js_str(value) for name, value in command.env.items()}
    return LaunchSide(argv=tuple(command.argv), env=env, image=rendering.image)


def bench_side(launch: LaunchLine) -> LaunchSide:
    argv = tuple(launch.argv)
    if launch.staged_model is not None and argv[2:3] == (launch.staged_model[0],):
        # a launcher-staged copy: the served model is the config's (the path is host-specific)
        argv = (*argv[:2], launch.staged_model[1], *argv[3:])
    return LaunchSide(argv=argv, env=dict(launch.env), image=launch.image)


def recipe_min_version(recipes: RecipesRepo, profile: Profile) -> str | None:
    recipe = recipes.by_path[profile.recipe_path]
    model: Mapping[str, Any] = recipe.data.get("model") or {}
    variant: Mapping[str, Any] = recipe.variants.get(profile.variant) or {}
    version = variant.get("min_vllm_version") or model.get("min_vllm_version")
    return str(version) if version else None


class Comparer:
    """Comparisons against one recipes tree under one set of rules, with what repeats kept:
    the taxonomy's GPU memory, and (``memo``) each comparison per identical (profile, served
    launch), since the points of a sweep mostly launch the same line. The align run and the
    audit each own one; ``stats`` counts the work done (``renderings``, ``comparisons``,
    ``comparison_hits``)."""

    def __init__(
        self,
        recipes: RecipesRepo,
        rules: Rules,
        *,
        memo: bool = True,
        vram: Mapping[str, float] | None = None,
        stats: Counter[str] | None = None,
    ) -> None:
        self.recipes = recipes
        self.rules = rules
        self.memo = memo
        self.vram = vram if vram is not None else taxonomy_vram(recipes)
        self.stats: Counter[str] = stats if stats is not None else Counter()
        self._rendered: set[tuple[Any, ...]] = set()
        self._seen: dict[tuple[Any, ...], Comparison] = {}

    def render(self, profile: Profile) -> Rendering:
        """The profile's rendering (memoised on the tree; raises its one-line error)."""
        rendering = render(self.recipes, profile.request())
        if profile.key not in self._rendered:
            self._rendered.add(profile.key)
            self.stats["renderings"] += 1
        return rendering

    def __call__(self, launch: LaunchLine, profile: Profile) -> Comparison:
        """Render ``profile`` and diff it against ``launch`` under vLLM's CLI semantics."""
        bench = bench_side(launch)
        key = (profile.key, bench.argv, tuple(bench.env.items()), bench.image)
        found = self._seen.get(key) if self.memo else None
        if found is not None:
            self.stats["comparison_hits"] += 1
            return replace(found, launch=launch, profile=profile)
        rendering = self.render(profile)
        report = diff_launch(
            bench,
            recipe_side(rendering),
            hardware=profile.hardware,
            rules=self.rules,
            taxonomy_vram=self.vram,
            recipe_min_version=recipe_min_version(self.recipes, profile),
        )
        self.stats["comparisons"] += 1
        comparison = Comparison(
            launch,
            profile,
            rendering,
            report,
            knob_classes(self.rules, report),
            recipe_feature_keys(self.rules, report),
        )
        if self.memo:
            self._seen[key] = comparison
        return comparison


def compare(
    recipes: RecipesRepo,
    rules: Rules,
    launch: LaunchLine,
    profile: Profile,
    *,
    vram: Mapping[str, float] | None = None,
) -> Comparison:
    """One comparison (:class:`Comparer`, nothing kept)."""
    return Comparer(recipes, rules, memo=False, vram=vram)(launch, profile)


def knob_classes(rules: Rules, report: DiffReport) -> dict[tuple[str, str], KnobClass]:
    """The knob class of every flag and env difference of ``report``."""
    return {(d.kind, d.key): c for d in report.diffs if (c := knob_of(rules, d)) is not None}


def recipe_feature(rules: Rules, diff: FlagDiff) -> bool:
    """A chat-client feature only the recipe side sets (rules/knobs.yaml ``recipe_features``):
    not drift, wherever the recipe's command comes from (rendering or guide)."""
    return (
        diff.kind == "flag"
        and diff.verdict == Verdict.RECIPE_ONLY
        and rules.knobs.recipe_feature(diff.flag) is not None
    )


def recipe_feature_keys(rules: Rules, report: DiffReport) -> frozenset[tuple[str, str]]:
    """(kind, key) of the recipe-only differences that are ``recipe_features``."""
    return frozenset((d.kind, d.key) for d in report.diffs if recipe_feature(rules, d))
