"""The launch line a job actually executed, read from its log (docs/spec/benchmark-extraction.md
§3.2).

Two forms reach the log:

* ``printf-q``: agentic scripts write the server command with ``printf '%q '`` to a command
  file and ``tee`` it, so the log has a plain line starting with the program word (and
  ending in a space);
* ``xtrace``: scripts running under ``set -x`` print ``+ vllm serve …`` (one ``+`` per
  nesting level) on stderr.

The command file is preferred when both appear. The launcher's own xtrace line
(``+ srun … bash benchmarks/…/<script>.sh``) names the executed script and its image.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.argv import flag_value, option_name, value_at
from bot.evidence.bashwords import QuotingError, split_words
from bot.evidence.logtext import LogLine, log_lines

LaunchKind = Literal["printf-q", "xtrace"]

_XTRACE = re.compile(r"(\++) ")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PRINTF_Q_START = re.compile(r"(?:\S*/)?vllm serve ")
_SCRIPT = re.compile(r"(?:\./|/workspace/)?(benchmarks/\S+\.sh)")
MAX_CONTINUATION_LINES = 200  # a quoted multi-line word (heredoc JSON) spans at most this
# characters re-parsed while joining continuation lines, per log: keeps a hostile log (many
# unterminated quotes) linear; real logs have one or two multi-line launch words
CONTINUATION_BUDGET = 4 * 1024 * 1024
_SERVER_READY = ("Application startup complete", "Uvicorn running on")


@dataclass(frozen=True)
class LoggedLaunch:
    argv: tuple[str, ...]  # argv[0] is the program word ("vllm")
    kind: LaunchKind
    line_number: int  # in the downloaded log
    text: str  # the log line(s) without timestamps/ANSI, as printed
    env_prefix: tuple[str, ...] = ()  # NAME=value words before the program (xtrace only)


@dataclass(frozen=True)
class ArgvDifference:
    index: int
    found: str | None  # None: the found argv ended here
    expected: str | None  # None: the expected argv ended here


@dataclass(frozen=True)
class LaunchContext:
    """What the launcher's xtrace line says about the job."""

    script_path: str | None  # benchmarks/… relative to the repository root
    image: str | None  # --container-image / --container-name value, as printed
    line_number: int | None


def _is_server(argv: tuple[str, ...], start: int) -> bool:
    return (
        len(argv) > start + 1
        and argv[start].rsplit("/", 1)[-1] == "vllm"
        and argv[start + 1] == "serve"
    )


def _xtrace_words(
    lines: list[LogLine], index: int, raw: bool, budget: list[int]
) -> tuple[tuple[str, ...], str] | None:
    """Words of the xtrace line at ``index``. Bash prints a word containing a newline inside
    single quotes as is, so such a word continues on the following log lines."""
    text = lines[index].raw if raw else lines[index].text
    prefix = _XTRACE.match(text)
    if prefix is None:
        return None
    for extra in range(MAX_CONTINUATION_LINES + 1):
        if extra:
            if index + extra >= len(lines) or budget[0] <= 0:
                return None
            following = lines[index + extra]
            added = following.raw if raw else following.text
            text += "\n" + added
            if "'" not in added:
                continue  # only a quote can close the open one
            budget[0] -= len(text)
        try:
            return split_words(text[prefix.end() :]), text
        except QuotingError as err:
            if not err.unterminated:
                return None
    return None


def _xtrace_launch(lines: list[LogLine], index: int, budget: list[int]) -> LoggedLaunch | None:
    line = lines[index]
    if "vllm" not in line.text or _XTRACE.match(line.text) is None:
        return None
    # uncleaned first: an ESC inside '…' is part of a word, not a colour code
    for raw in (True, False):
        parsed = _xtrace_words(lines, index, raw, budget)
        if parsed is not None and (launch := _xtrace_server(parsed, line.number)):
            return launch
    return None


def _xtrace_server(parsed: tuple[tuple[str, ...], str], number: int) -> LoggedLaunch | None:
    words, text = parsed
    start = 0
    # inline env prefix (`VAR=x vllm serve`) and an `env [VAR=x…]` prefix array
    while start < len(words) and _ASSIGNMENT.match(words[start]):
        start += 1
    if start < len(words) and words[start] == "env":
        start += 1
        while start < len(words) and _ASSIGNMENT.match(words[start]):
            start += 1
    if not _is_server(words, start):
        return None
    env = tuple(word for word in words[:start] if word != "env")
    return LoggedLaunch(words[start:], "xtrace", number, text, env)


def _printf_q_launch(line: LogLine) -> LoggedLaunch | None:
    for text in (line.raw, line.text) if line.raw is not line.text else (line.text,):
        if _PRINTF_Q_START.match(text) is None:
            continue
        try:
            words = split_words(text)
        except QuotingError:
            continue
        if _is_server(words, 0):
            return LoggedLaunch(words, "printf-q", line.number, text)
    return None


def find_launch_lines(log: str | list[LogLine]) -> tuple[LoggedLaunch, ...]:
    """Every server launch line in the log, in log order."""
    lines = log_lines(log) if isinstance(log, str) else log
    found: list[LoggedLaunch] = []
    budget = [CONTINUATION_BUDGET]
    for index, line in enumerate(lines):
        launch = _xtrace_launch(lines, index, budget) or _printf_q_launch(line)
        if launch is not None:
            found.append(launch)
    return tuple(found)


def preferred_launch(launches: tuple[LoggedLaunch, ...]) -> LoggedLaunch | None:
    """The line to trust: the command file (printf-q, ending in a space) over xtrace; the
    first of its kind (later ones are server restarts, reported separately)."""
    ranked = sorted(
        launches,
        key=lambda launch: (
            launch.kind != "printf-q",
            not launch.text.endswith(" "),
            launch.line_number,
        ),
    )
    return ranked[0] if ranked else None


def launch_context(log: str | list[LogLine]) -> LaunchContext:
    """Script path and image from the launcher's ``+ srun|docker … bash benchmarks/….sh``."""
    lines = log_lines(log) if isinstance(log, str) else log
    for line in lines:
        prefix = _XTRACE.match(line.text)
        if prefix is None or "benchmarks/" not in line.text:
            continue
        try:
            words = split_words(line.text[prefix.end() :])
        except QuotingError:
            continue
        if not words or words[0].rsplit("/", 1)[-1] not in ("srun", "docker", "bash", "sbatch"):
            continue
        script = next(
            (m.group(1) for word in words if (m := _SCRIPT.fullmatch(word))),
            None,
        )
        if script is None:
            continue
        return LaunchContext(script, _image(words), line.number)
    return LaunchContext(None, None, None)


def _image(words: tuple[str, ...]) -> str | None:
    for i, word in enumerate(words):
        for flag in ("--container-image", "--container-name"):
            if word.startswith(flag + "="):
                return word.split("=", 1)[1]
            if word == flag and i + 1 < len(words):
                return words[i + 1]
    return None


def server_ready(log: str | list[LogLine]) -> bool:
    """Whether vLLM logged that its API server finished starting."""
    lines = log_lines(log) if isinstance(log, str) else log
    return any(marker in line.text for line in lines for marker in _SERVER_READY)


def first_difference(found: tuple[str, ...], expected: tuple[str, ...]) -> ArgvDifference | None:
    """The first token where two argvs differ (exact comparison), None when equal."""
    for index in range(max(len(found), len(expected))):
        got = found[index] if index < len(found) else None
        want = expected[index] if index < len(expected) else None
        if got != want:
            return ArgvDifference(index, got, want)
    return None


def speculative_config(argv: tuple[str, ...]) -> dict[str, Any] | None:
    """``--speculative-config`` as data: the JSON value plus dotted ``.key`` overrides."""
    config: dict[str, Any] = {}
    raw = flag_value(argv, "--speculative-config")
    if raw is not None:
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            config.update(parsed)
    prefix = "--speculative-config."
    for i, word in enumerate(argv):
        if word.startswith(prefix):
            key = option_name(word)[len(prefix) :]
            config[key.replace("-", "_")] = value_at(argv, i) or ""
    return config if config or raw is not None else None


def uses_synthetic_acceptance(argv: tuple[str, ...]) -> bool:
    """Whether the server verified drafts synthetically (a fixed acceptance length): such an
    arm measures throughput only and never verifies a configuration."""
    config = speculative_config(argv) or {}
    if config.get("rejection_sample_method") == "synthetic":
        return True
    raw = flag_value(argv, "--speculative-config") or ""
    # unparseable JSON: fall back to the text the brief names
    return re.search(r'"rejection_sample_method"\s*:\s*"synthetic"', raw) is not None
