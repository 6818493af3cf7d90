"""Job-log text as GitHub serves it → plain lines.

A downloaded job log may start with a UTF-8 byte-order mark, prefixes every line with an
ISO-8601 UTC timestamp and a space (``2026-09-12T10:31:07.1234567Z ``), and keeps the ANSI
colour codes programs printed. Parsers work on the lines without any of that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
# CSI sequences (colours, cursor moves) and the two-byte ESC forms. printf %q writes an ESC in
# an argv word as $'\E', but bash's xtrace prints it raw inside '…', so launch lines are parsed
# from ``LogLine.raw`` (only the timestamp removed) first.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")


@dataclass(frozen=True, slots=True)  # one per log line: keep them small
class LogLine:
    number: int  # 1-based line number in the downloaded log
    text: str  # without timestamp prefix, ANSI codes and trailing CR
    raw: str  # without timestamp prefix and trailing CR only (same object when no ESC)


def strip_timestamp(line: str) -> str:
    match = _TIMESTAMP.match(line)
    return (line[match.end() :] if match else line).rstrip("\r")


def strip_line(line: str) -> str:
    """One raw log line → its text (timestamp prefix, ANSI codes and CR removed)."""
    text = strip_timestamp(line)
    return _ANSI.sub("", text) if "\x1b" in text else text


def log_lines(log: str) -> list[LogLine]:
    """Every line of a job log, cleaned, with its line number."""
    lines = []
    for index, line in enumerate(log.removeprefix("\ufeff").split("\n"), 1):
        raw = strip_timestamp(line)
        text = _ANSI.sub("", raw) if "\x1b" in raw else raw
        lines.append(LogLine(index, text, raw))
    return lines
