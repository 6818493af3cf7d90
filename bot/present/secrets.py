"""Credentials found in a benchmark launch are never printed: every text shows ``***``.

A benchmark script may spell a credential out (``HF_TOKEN=hf_…``, ``VLLM_API_KEY=…``,
``--api-key sk-…``). The analysis keeps the values (they are compared as front-end flags and
never proposed), but each text the bot publishes (PR title/body, comment, check run,
annotations) has them replaced, wherever they appear, by ``***``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from bot.align.result import AlignRun

MASK = "***"
# the credential flags of vLLM's front end (rules/flags.yaml: API authentication, credential)
CREDENTIAL_FLAGS = ("--api-key", "--hf-token")
# environment names that hold credentials: HF_TOKEN, VLLM_API_KEY, MODAL_TOKEN_SECRET, …
_CREDENTIAL_ENV = re.compile(
    r"(?:^|_)(?:TOKEN|API_KEY|SECRET|PASSWORD|PASSWD|ACCESS_KEY|PRIVATE_KEY)(?:_|$)"
)
_PLACEHOLDER = re.compile(r"<[^<>]*>\Z")  # the evaluator's stand-in for an unknown value
MIN_SECRET = 4  # shorter values would mask unrelated text ("-", "0", "x")


def is_credential_env(name: str) -> bool:
    return _CREDENTIAL_ENV.search(name.upper()) is not None


def credential_values(argv: Iterable[str], env: Mapping[str, str]) -> set[str]:
    """The literal credential values of one launch (placeholders and short values excluded)."""
    found = {value for name, value in env.items() if is_credential_env(name)}
    words = list(argv)
    for index, word in enumerate(words):
        for flag in CREDENTIAL_FLAGS:
            if word == flag and index + 1 < len(words):
                found.add(words[index + 1])
            elif word.startswith(flag + "="):
                found.add(word[len(flag) + 1 :])
    return {v for v in found if len(v) >= MIN_SECRET and not _PLACEHOLDER.match(v)}


def run_credentials(run: AlignRun) -> set[str]:
    found: set[str] = set()
    for key in run.keys:
        for point in key.points:
            launch = point.launch
            if launch is not None:
                found |= credential_values(launch.argv, {**launch.job_env, **launch.env})
    return found


class Masker:
    """Replaces each credential value (not inside a longer word) by ``***``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        ordered = sorted(set(secrets), key=len, reverse=True)
        self._pattern = (
            re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(s) for s in ordered) + r")(?![\w-])")
            if ordered
            else None
        )

    def __call__(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(MASK, text)
