"""One ANSI-C decoder: ``$'…'`` gives the same argv word on the extractor path (the bash
evaluator) and on the evidence path (job-log word splitting), byte-correct as bash does."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from bot.evidence.bashwords import split_words
from bot.shell import ScriptResult, purecmd
from bot.shell.escapes import decode_ansi_c

Runner = Callable[..., ScriptResult]  # the run_script fixture of tests/shell/conftest.py

CASES = [
    (r"\303\251", "\u00e9"),  # octal escapes are the UTF-8 bytes of é, not "Ã©"
    (r"\xc3\xa9", "\u00e9"),
    (r"\x41", "A"),
    (r"\u00e9", "\u00e9"),
    (r"\U0001F600", "\U0001f600"),
    (r"\n", "\n"),
    (r"\'", "'"),
    (r"\E[0m", "\x1b[0m"),
    (r"\cA\c?", "\x01\x7f"),
    (r"\0101", "\b1"),  # at most three octal digits
    (r"\x\q", r"\x\q"),  # no escape: the backslash stays
    (r"a\0b", "a"),  # NUL ends the string
    (r"\377", "\ufffd"),  # an invalid UTF-8 byte: one replacement character
    (r"\303", "\ufffd"),  # a truncated sequence
    (r"\U00110000", "\ufffd" * 4),  # bash's 4-byte form past U+10FFFF is not valid UTF-8
]


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_extractor_path(run_script: Runner, body: str, expected: str) -> None:
    result = run_script(f"vllm serve $'{body}' --port 1\n")
    assert result.argv[2] == expected


@pytest.mark.parametrize(("body", "expected"), CASES)
def test_evidence_path(body: str, expected: str) -> None:
    assert split_words(f"vllm serve $'{body}' --port 1") == (
        "vllm",
        "serve",
        expected,
        "--port",
        "1",
    )


@pytest.mark.parametrize(("body", "expected"), [c for c in CASES if "'" not in c[0]])
def test_parameter_transform_and_decoder(run_script: Runner, body: str, expected: str) -> None:
    assert decode_ansi_c(body) == expected
    result = run_script(f"x='{body}'\nvllm serve \"${{x@E}}\"\n")
    assert result.argv[2] == expected


def test_printf_escapes_are_bytes_too() -> None:
    assert purecmd.printf(r"\303\251|%b", [r"\0303\0251"]) == ("\u00e9|\u00e9", 0)


@pytest.mark.parametrize(("body", "expected"), [c for c in CASES if "\ufffd" not in c[1]])
def test_cases_match_bash(body: str, expected: str) -> None:
    done = subprocess.run(
        ["bash", "-c", f"printf '%s' $'{body}'"],
        capture_output=True,
        check=True,
        env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.decode("utf-8") == expected
