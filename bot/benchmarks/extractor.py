"""The InferenceX shape of the shell evaluator: its library and the vLLM launch, registered.

``bot.shell`` knows nothing of either; this module builds the handler registry once and
evaluates benchmark scripts with it.
"""

from __future__ import annotations

from functools import partial

from bot.benchmarks import library
from bot.benchmarks.launch_detector import launch_kind
from bot.shell import evaluate_script as evaluate_with
from bot.shell.handlers import Handlers


def inferencex_handlers() -> Handlers:
    """A fresh registry: the benchmark library's models and the ``vllm serve`` detector."""
    handlers = Handlers(
        launch=launch_kind, launch_label="vllm launch", server_label="a vLLM server"
    )
    library.register(handlers)
    return handlers


HANDLERS = inferencex_handlers()


# bot.shell's evaluate_script with the InferenceX handlers: up to the vLLM launch
evaluate_script = partial(evaluate_with, handlers=HANDLERS)


__all__ = ["HANDLERS", "evaluate_script", "inferencex_handlers"]
