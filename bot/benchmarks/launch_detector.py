"""Which command is the vLLM server launch that ends a benchmark script's evaluation."""

from __future__ import annotations

import re
from collections.abc import Sequence

_LAUNCH_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")
# Source text that may start a server: a library function containing it is inlined, not skipped.
LAUNCH_TEXT = re.compile(rb"\bvllm\s+serve\b|vllm\.entrypoints\.(openai\.api_server|api_server)")


def launch_kind(argv: Sequence[str]) -> bool:
    """True for ``vllm serve …`` and ``python -m vllm.entrypoints.openai.api_server …``."""
    if not argv:
        return False
    prog = argv[0].rsplit("/", 1)[-1]
    if prog == "vllm":
        return len(argv) > 1 and argv[1] == "serve"
    if re.fullmatch(r"python(\d+(\.\d+)?)?", prog):
        for index, arg in enumerate(argv[1:-1], 1):
            if arg == "-m":
                module = argv[index + 1]
                if module in _LAUNCH_MODULES:
                    return True
                return (
                    module == "vllm.entrypoints.cli.main"
                    and len(argv) > index + 2
                    and argv[index + 2] == "serve"
                )
            if not arg.startswith("-"):
                return False
    return False


__all__ = ["LAUNCH_TEXT", "launch_kind"]
