"""Deprecated config fields read as vLLM reads them (docs/spec/vllm-cli-semantics.md §5.5).

vLLM migrates some deprecated fields of a JSON-valued flag into the field that replaced them
when it builds its config (``--attention-config.use_trtllm_ragged_deepseek_prefill=True`` is
``mla_prefill_backend=TRTLLM_RAGGED``; rules/vllm-defaults.yaml ``superseded``). Compared as
text, a recipe that spells the old field and a benchmark that spells the new one "differ"
although both launch the same backend. Here both sides are read the way vLLM reads them, but
only when a side spells a replacing field: then the launch's vLLM has it (an older release
reads the deprecated field on its own, so nothing is rewritten).
"""

from __future__ import annotations

from dataclasses import replace

from bot.vllm.defaults import Superseded, VllmDefaults
from bot.vllm.serve_config import ServeConfig
from bot.vllm.values import compact


def read_superseded(
    bench: ServeConfig, recipe: ServeConfig, defaults: VllmDefaults
) -> tuple[ServeConfig, ServeConfig, dict[str, str]]:
    """Both sides with each deprecated field replaced by the setting it means (dropped when
    that setting is spelled too: vLLM then ignores it, or when its value selects nothing),
    and, per canonical key so read, why (the deprecated spelling and its source)."""
    flags = {s.flag for s in (*bench.settings, *recipe.settings)}
    rules = [r for r in defaults.superseded if f"{r.flag}.{r.means}" in flags]
    if not rules:
        return bench, recipe, {}
    why: dict[str, str] = {}
    return _read(bench, rules, why), _read(recipe, rules, why), why


def _read(config: ServeConfig, rules: list[Superseded], why: dict[str, str]) -> ServeConfig:
    settings = list(config.settings)
    flags = {s.flag for s in settings}
    for rule in rules:
        old = next((s for s in settings if s.flag == f"{rule.flag}.{rule.name}"), None)
        if old is None:
            continue
        at = settings.index(old)
        del settings[at]
        meant = f"{rule.flag}.{rule.means}"
        if meant in flags or not rule.applies(old.value):
            continue
        key = f"{old.key.rsplit('.', 1)[0]}.{rule.means}"
        settings.insert(at, replace(old, key=key, flag=meant, value=rule.value))
        why[key] = (
            f"{rule.flag}.{rule.name} {compact(old.value)} is vLLM's deprecated spelling of "
            f"{meant} {rule.value} [{rule.source}]"
        )
    return replace(config, settings=tuple(settings))
