"""The InferenceX shape of the shell evaluator: its library and the vLLM launch, registered.

``bot.shell`` knows nothing of either; this module builds the handler registry once and
evaluates benchmark scripts with it.
"""

from __future__ import annotations

from collections.abc import Mapping

from bot.benchmarks import library
from bot.benchmarks.launch_detector import launch_kind
from bot.shell import EvaluationCache, Limits, ScriptParser, ScriptResult
from bot.shell import evaluate_script as evaluate_with
from bot.shell.handlers import Handlers
from bot.sources import FileSource


def inferencex_handlers() -> Handlers:
    """A fresh registry: the benchmark library's models and the ``vllm serve`` detector."""
    handlers = Handlers(
        launch=launch_kind, launch_label="vllm launch", server_label="a vLLM server"
    )
    library.register(handlers)
    return handlers


HANDLERS = inferencex_handlers()


def evaluate_script(
    source: FileSource,
    script: str,
    env: Mapping[str, str],
    *,
    parser: ScriptParser | None = None,
    limits: Limits | None = None,
    workdir: str | None = None,
    env_label: str = "<job env>",
    cache: EvaluationCache | None = None,
) -> ScriptResult:
    """:func:`bot.shell.evaluate_script` with the InferenceX handlers: up to the vLLM launch."""
    return evaluate_with(
        source,
        script,
        env,
        parser=parser,
        limits=limits,
        workdir=workdir,
        env_label=env_label,
        handlers=HANDLERS,
        cache=cache,
    )


__all__ = ["HANDLERS", "evaluate_script", "inferencex_handlers"]
