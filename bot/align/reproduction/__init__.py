"""Benchmark reproduction sections of the recipe guide (computed, never typed by hand).

Per (recipe file, variant, hardware, benchmark scenario) the points of the benchmark PR that
map to that recipe — the recipe's own profile and the points that are not (another TP,
DP-attention behind a router, synthetic-acceptance throughput arms) — become one managed
Markdown block in ``guide:`` (:mod:`bot.recipes.guide` places it and keeps every other byte):

- a heading and one paragraph: which benchmark PR and config key, that it is not the default;
- the deltas from the recipe's own command for that hardware (the recipe as this PR leaves
  it), from the same semantic diff the planner uses;
- the env exports grouped by knob class (kernel selection and serving settings of the
  benchmarked command vs benchmark-only settings), harness variables left out;
- one full ``vllm serve`` command per topology (+ the router command when the benchmark
  starts one), synthetic-acceptance fields dropped (real acceptance restored), values that the
  script derives from the concurrency written as its rule (``$((2 * CONC))``);
- the image the benchmark ran and the eval evidence (run, attempt, task, metric, value ±
  stderr) when a run verified it.

``drift.py`` reads the hand-written guide commands back (:func:`guide_drift`): each
``vllm serve`` of the recipe's model in a shell fence, mapped to a launch line by hardware
(named in its headings) and parallelism, diffed under vLLM's CLI semantics.
"""

from bot.align.reproduction.defaults import short_list, shortened
from bot.align.reproduction.drift import guide_drift, hardware_named
from bot.align.reproduction.model import (
    KIND,
    GuideDrift,
    GuidePlacement,
    ReproCommand,
    ReproSection,
    SectionPoint,
)
from bot.align.reproduction.placing import apply_sections
from bot.align.reproduction.sections import build_sections, section_points

__all__ = [
    "KIND",
    "GuideDrift",
    "GuidePlacement",
    "ReproCommand",
    "ReproSection",
    "SectionPoint",
    "apply_sections",
    "build_sections",
    "guide_drift",
    "hardware_named",
    "section_points",
    "short_list",
    "shortened",
]
