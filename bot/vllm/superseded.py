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

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic import Field

from bot.rules.models import Strict
from bot.vllm.serve_config import ServeConfig
from bot.vllm.values import compact, lax_bool


class Superseded(Strict):
    """A deprecated field of a JSON-valued flag that vLLM reads as another field's value
    (rules/vllm-defaults.yaml ``superseded``)."""

    flag: str = Field(pattern=r"^--[a-z0-9-]+$")
    name: str = Field(min_length=1)  # the deprecated field
    when: str = Field(min_length=1)  # the value it has effect at (compared by truth)
    means: str = Field(min_length=1)  # the field vLLM sets from it
    value: str = Field(min_length=1)  # … to this value
    source: str = Field(min_length=1)

    def applies(self, value: Any) -> bool:
        """Does the deprecated field, set to ``value``, select the meant value? (read as
        pydantic reads a bool: ``True``, ``true``, ``1`` …)"""
        read = lax_bool(value)
        return isinstance(read, bool) and read == lax_bool(self.when)


def read_superseded(
    bench: ServeConfig, recipe: ServeConfig, table: Sequence[Superseded]
) -> tuple[ServeConfig, ServeConfig, dict[str, str]]:
    """Both sides with each deprecated field replaced by the setting it means (dropped when
    that setting is spelled too: vLLM then ignores it, or when its value selects nothing),
    and, per canonical key so read, why (the deprecated spelling and its source)."""
    flags = {s.flag for s in (*bench.settings, *recipe.settings)}
    rules = [r for r in table if f"{r.flag}.{r.means}" in flags]
    if not rules:
        return bench, recipe, {}
    why: dict[str, str] = {}
    return _read(bench, rules, why, True), _read(recipe, rules, why, False), why


def _read(
    config: ServeConfig, rules: list[Superseded], why: dict[str, str], spelled: bool
) -> ServeConfig:
    """``spelled``: keep the deprecated field's tokens on the setting it means (the
    benchmark's, which cite its script). The recipe's are dropped: the old field is no value
    node of the new one, so an edit adds the new field beside it (vLLM then ignores the old)."""
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
        tokens = old.tokens if spelled else ()
        settings.insert(at, replace(old, key=key, flag=meant, value=rule.value, tokens=tokens))
        why[key] = (
            f"{rule.flag}.{rule.name} {compact(old.value)} is vLLM's deprecated spelling of "
            f"{meant} {rule.value} [{rule.source}]"
        )
    return replace(config, settings=tuple(settings))
