"""Static evaluation of bash benchmark scripts: the launch line without running anything.

``evaluate_script(source, path, env)`` parses the script with tree-sitter-bash and partially
evaluates it (quoting, expansions, arrays, arithmetic, conditionals, loops, functions, the
benchmark library) until it reaches the ``vllm serve`` launch. Unknown values become named
placeholders with :class:`Unresolved` explanations; nothing is executed or written.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.shell.budget import Budget, Limits
from bot.shell.errors import BudgetExceeded, ExtractionError
from bot.shell.evaluator import Evaluator, launch_kind
from bot.shell.parse import ScriptParser
from bot.shell.result import ScriptResult, SourceSpan, Unresolved
from bot.sources import FileSource

__all__ = [
    "Budget",
    "BudgetExceeded",
    "ExtractionError",
    "Limits",
    "ScriptParser",
    "ScriptResult",
    "SourceSpan",
    "Unresolved",
    "evaluate_script",
    "launch_kind",
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
) -> ScriptResult:
    """Statically evaluate ``script`` (repository-relative) with input environment ``env``.

    Raises :class:`ExtractionError` (or its :class:`BudgetExceeded`) for scripts that cannot
    be evaluated at all; everything else is reported inside the result.
    """
    parser = parser or ScriptParser(limits)
    budget = Budget(limits or parser.limits)
    evaluator = Evaluator(
        source, parser, script, env, budget=budget, workdir=workdir, env_label=env_label
    )
    return evaluator.run()
