"""Why a master-config key is outside single-node extraction: framework or multi-node layout.

The real master configs carry vLLM-served multi-node keys under several frameworks
(``dynamo-vllm``, ``vllm-disagg``, ``llmd-vllm``); telling their maintainers "not rendered by
vLLM recipes" would be wrong. Their commands come from a recipe file named by ``CONFIG_FILE``
in the workers' ``additional-settings`` (srt-slurm, llm-d) or from the multi-node launcher's
per-worker settings, which the single-node extractor does not read
(docs/spec/benchmark-extraction.md §1.6).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

_VLLM_TOKEN = re.compile(r"(?:^|-)vllm(?:$|-)")


def serves_vllm(framework: str) -> bool:
    """True for a framework whose engine is vLLM (``vllm``, ``dynamo-vllm``, ``vllm-disagg``)."""
    return _VLLM_TOKEN.search(framework) is not None


def _settings(raw: Mapping[str, Any]) -> Iterator[str]:
    scenarios = raw.get("scenarios")
    if not isinstance(scenarios, Mapping):
        return
    for entries in scenarios.values():
        for scenario in entries if isinstance(entries, list) else ():
            spaces = scenario.get("search-space") if isinstance(scenario, Mapping) else None
            for space in spaces if isinstance(spaces, list) else ():
                for role in ("prefill", "decode"):
                    worker = space.get(role) if isinstance(space, Mapping) else None
                    values = (
                        worker.get("additional-settings") if isinstance(worker, Mapping) else None
                    )
                    for value in values if isinstance(values, list) else ():
                        if isinstance(value, str):
                            yield value


def multinode_reason(framework: str, raw: Any) -> str:
    """Where a multi-node key's serve commands come from, naming the first recipe file."""
    settings = list(dict.fromkeys(_settings(raw if isinstance(raw, Mapping) else {})))
    configs = [s.split("=", 1)[1] for s in settings if s.startswith("CONFIG_FILE=")]
    if configs:
        more = f" and {len(configs) - 1} more" if len(configs) > 1 else ""
        return (
            f"multi-node {framework}: its serve commands are rendered from the recipe "
            f"CONFIG_FILE={configs[0]}{more} (srt-slurm / llm-d), not by a single-node script"
        )
    if settings:
        shown = ", ".join(settings[:3])
        return (
            f"multi-node {framework}: started by the multi-node launcher from per-worker "
            f"settings ({shown}), not by a single-node script"
        )
    return f"multi-node {framework}: not started by a single-node script"
