"""Static partial evaluation of bash scripts: the launch line without running anything.

``evaluate_script(source, path, env, handlers=...)`` parses the script with tree-sitter-bash
and partially evaluates it (quoting, expansions, arrays, arithmetic, conditionals, loops,
functions; the ways a run-time condition can go, :mod:`bot.shell.path_sensitive`) until it
reaches the command the :class:`Handlers` registry calls the launch.
Libraries and launchers are registered from outside (``bot.benchmarks.extractor`` registers
InferenceX's benchmark library and ``vllm serve``). Unknown values become named placeholders
with :class:`Unresolved` explanations; nothing is executed or written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.shell.budget import Budget, Limits, job_budget
from bot.shell.cache import EvaluationCache
from bot.shell.effects import patches_engine
from bot.shell.errors import BudgetExceeded, ExtractionError, JobTooLarge
from bot.shell.handlers import Handlers
from bot.shell.interp import Evaluator
from bot.shell.parse import ScriptParser
from bot.shell.path_sensitive import evaluate_paths
from bot.shell.result import Alternative, ScriptResult, SourceSpan, Unresolved
from bot.sources import FileSource

__all__ = [
    "Alternative",
    "Budget",
    "BudgetExceeded",
    "EvaluationCache",
    "ExtractionError",
    "Handlers",
    "JobTooLarge",
    "Limits",
    "ScriptParser",
    "ScriptResult",
    "SourceSpan",
    "Unresolved",
    "evaluate_script",
    "job_budget",
    "patches_engine",
]


def evaluate_script(
    source: FileSource,
    script: str,
    env: Mapping[str, str],
    *,
    parser: ScriptParser | None = None,
    limits: Limits | None = None,
    workdir: str | None = None,
    env_label: str = "<job env>",
    handlers: Handlers | None = None,
    cache: EvaluationCache | None = None,
) -> ScriptResult:
    """Statically evaluate ``script`` (repository-relative) with input environment ``env``.

    Without ``handlers`` nothing is a launch: the result says where the script ended.
    Raises :class:`ExtractionError` (or its :class:`BudgetExceeded`) for scripts that cannot
    be evaluated at all; everything else is reported inside the result. With ``cache``, an
    earlier evaluation whose every read file is unchanged in ``source`` is reused.
    """
    parser = parser or ScriptParser(limits)
    active = parser
    chosen = limits or parser.limits

    def evaluate(files: FileSource) -> ScriptResult:
        def make(plan: Sequence[int] | None, budget: Budget) -> Evaluator:
            return Evaluator(
                files,
                active,
                script,
                env,
                budget=budget,
                workdir=workdir,
                env_label=env_label,
                handlers=handlers,
                plan=plan,
            )

        return evaluate_paths(make, chosen)

    if cache is None:
        return evaluate(source)
    key = cache.key(script, env, workdir, env_label, (chosen, parser.limits), handlers)
    return cache.evaluate(source, key, handlers, evaluate)
