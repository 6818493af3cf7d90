from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.evidence.bashwords import QuotingError, split_words
from bot.evidence.launch import find_launch_lines


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("vllm serve a --x 1", ("vllm", "serve", "a", "--x", "1")),
        ("a   b\tc ", ("a", "b", "c")),
        # printf %q: backslash escapes, the empty word, ANSI-C strings
        (r"\{\"k\":1\,\"v\":\[2\]\}", ('{"k":1,"v":[2]}',)),
        ("'' x", ("", "x")),
        (r"$'a\nb\tc\\d\'e'", ("a\nb\tc\\d'e",)),
        (r"$'\101\x42\u00e9\U0001F600\cA\e\z'", ("AB\u00e9\U0001f600\x01\x1b\\z",)),
        (r"$'\303\251'", ("\u00e9",)),  # octal bytes are UTF-8 of é
        # xtrace: single quotes with '\'' for an embedded quote, concatenation
        ("'it'\\''s' 'a b'", ("it's", "a b")),
        ("--x='{\"a\": 1}'", ('--x={"a": 1}',)),
        ('"a \\" \\$ \\n b"', ('a " $ \\n b',)),
        ('$"loc"', ("loc",)),
        ("x$y", ("x$y",)),
        ("", ()),
    ],
)
def test_split_words(line: str, argv: tuple[str, ...]) -> None:
    assert split_words(line) == argv


@pytest.mark.parametrize("line", ["'open", "$'open", '"open', "a | b", "a; b", "a > f", "x\\"])
def test_not_a_command_line(line: str) -> None:
    with pytest.raises(QuotingError):
        split_words(line)


def test_only_an_open_single_quote_may_continue_on_the_next_line() -> None:
    with pytest.raises(QuotingError) as err:
        split_words("'open")
    assert err.value.unterminated
    for line in ("a | b", "$'open", '"open'):
        with pytest.raises(QuotingError) as err:
            split_words(line)
        assert not err.value.unterminated, line


# Round trip against bash itself: whatever argv bash prints with printf %q or under set -x,
# the parser must give back exactly. Words avoid NUL (impossible in argv).
_words = st.lists(
    st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
        max_size=12,
    ),
    min_size=1,
    max_size=6,
)


def _bash(script: str, words: list[str]) -> tuple[str, str]:
    """(stdout, stderr) of bash, decoded without newline translation (a CR stays a CR)."""
    done = subprocess.run(
        ["bash", "-c", script, "_", *words],
        capture_output=True,
        check=True,
        env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )
    return done.stdout.decode(), done.stderr.decode()


@settings(max_examples=60, deadline=None)
@given(_words)
def test_printf_q_round_trips(words: list[str]) -> None:
    printed, _ = _bash('printf "%q " "$@"', words)
    assert split_words(printed) == tuple(words)


@settings(max_examples=60, deadline=None)
@given(_words)
def test_xtrace_round_trips(words: list[str]) -> None:
    # `set -x` output of a command named vllm; a word with a newline spans several lines
    _, trace = _bash('vllm() { :; }; set -x; vllm serve "$@"', words)
    launches = find_launch_lines(trace)
    assert [launch.argv for launch in launches][:1] == [("vllm", "serve", *words)]
