"""What :func:`bot.vllm.normalise.normalise` answers: the canonical serve configuration (one
:class:`Setting` per canonical key, in order of first appearance) and the findings about the
argv it came from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.vllm.catalogue import FlagSpec
from bot.vllm.versions import Version

Severity = Literal["error", "hazard", "note"]
UsageContext = Literal["OPENAI_API_SERVER", "LLM_CLASS"]


@dataclass(frozen=True)
class Finding:
    """Something about one side's argv: an error (vLLM would not start), a hazard (accepted,
    probably not what the author meant) or a note."""

    severity: Severity
    code: str
    message: str
    tokens: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    key: str  # canonical key, e.g. "scheduler.max_num_seqs"
    flag: str  # canonical long spelling, e.g. "--max-num-seqs"
    value: Any  # canonical value
    tokens: tuple[str, ...]  # raw argv tokens it came from (flag and value as spelled)
    spec: FlagSpec | None  # None for the positional model


@dataclass(frozen=True)
class ServeConfig:
    version: Version
    usage_context: UsageContext
    entrypoint: Literal["vllm serve", "api_server"]
    model: str | None
    model_tokens: tuple[str, ...]
    settings: tuple[Setting, ...]  # in order of first appearance
    findings: tuple[Finding, ...]

    def get(self, key: str) -> Setting | None:
        return next((s for s in self.settings if s.key == key), None)

    def values(self) -> dict[str, Any]:
        return {s.key: s.value for s in self.settings}

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")


class Findings:
    """The findings of one normalisation, in order, without duplicates."""

    def __init__(self) -> None:
        self.items: list[Finding] = []

    def add(self, severity: Severity, code: str, message: str, tokens: Sequence[str] = ()) -> None:
        finding = Finding(severity, code, message, tuple(tokens))
        if finding not in self.items:
            self.items.append(finding)
