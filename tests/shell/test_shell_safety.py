"""The evaluator never executes, writes or escapes the repository, and pathological or random
input ends in a result or the typed extraction error, never another exception."""

from __future__ import annotations

import builtins
import io
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.benchmarks.extractor import evaluate_script
from bot.shell import BudgetExceeded, ExtractionError, Limits
from bot.sources import DirectorySource

DATA = Path(__file__).resolve().parent.parent / "data" / "bench"
SCRIPTS = sorted((DATA / "benchmarks").rglob("*.sh"))
ENV = {"MODEL": "acme/Foo-7B", "TP": "4", "CONC": "16", "ISL": "1024", "OSL": "1024",
       "MAX_MODEL_LEN": "2304", "EVAL_ONLY": "false", "KV_OFFLOADING": "none",
       "KV_OFFLOAD_BACKEND": "", "RESULT_DIR": "/workspace/results",
       "DURATION": "3600"}  # fmt: skip


class Executed(AssertionError):
    """Raised by the guards below: something tried to run a process."""


@pytest.fixture()
def no_processes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*args: object, **kwargs: object) -> None:
        raise Executed(f"process started: {args!r}")

    for name in ("Popen", "run", "call", "check_call", "check_output", "getoutput"):
        monkeypatch.setattr(subprocess, name, refuse)
    for name in ("system", "popen", "execv", "execve", "execvp", "execvpe", "execl", "execlp",
                 "spawnv", "spawnve", "spawnvp", "posix_spawn", "posix_spawnp",
                 "fork"):  # fmt: skip
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
    yield


@contextmanager
def read_only_inside(repo: Path) -> Iterator[None]:
    """While active, opening a file for writing, or any file outside ``repo``, fails."""
    real_open = builtins.open

    def guarded(file: object, mode: str = "r", *args: object, **kwargs: object) -> object:
        if isinstance(file, str | Path):
            path = Path(file).resolve()
            if any(flag in mode for flag in "wax+"):
                raise Executed(f"write attempted: {path}")
            if not path.is_relative_to(repo):
                raise Executed(f"read outside the repository: {path}")
        return real_open(file, mode, *args, **kwargs)  # type: ignore[call-overload]

    builtins.open = guarded  # type: ignore[assignment]
    io.open = guarded  # type: ignore[assignment]
    try:
        yield
    finally:
        builtins.open = real_open
        io.open = real_open


HOSTILE = """#!/usr/bin/env bash
source "$(dirname "$0")/../lib.sh"
touch "$TARGET/touched"
rm -rf "$TARGET/keep"
mkdir -p "$TARGET/newdir"
echo written > "$TARGET/written"
echo appended >> "$TARGET/keep/file"
curl -sSL http://localhost:1/x -o "$TARGET/downloaded"
python3 -c "open('$TARGET/py', 'w').write('x')"
python3 - <<'PY'
open("/tmp/heredoc-python", "w").write("x")
PY
X=$(touch "$TARGET/from-substitution"; echo x)
bash -c "touch '$TARGET/bash-c'"
eval "touch '$TARGET/eval'"
cat /etc/passwd > "$TARGET/passwd"
cp /etc/hostname "$TARGET/hostname"
sh "$TARGET/../../../../bin/true"
"$TARGET/keep/run.sh"
exec 3> "$TARGET/fd3"
tee "$TARGET/tee" <<< "x"
printf '%q ' vllm serve | tee "$TARGET/vllm_command.txt"
vllm serve m --x "$X" > "$TARGET/server.log" 2>&1 &
"""


def test_hostile_script_leaves_no_trace(tmp_path: Path, no_processes: None) -> None:
    repo = tmp_path / "repo"
    target = tmp_path / "target"
    (target / "keep").mkdir(parents=True)
    (target / "keep" / "file").write_bytes(b"original\n")
    (target / "keep" / "run.sh").write_bytes(b"#!/bin/sh\ntouch ran\n")
    script = repo / "benchmarks" / "x.sh"
    script.parent.mkdir(parents=True)
    repo.mkdir(exist_ok=True)
    script.write_bytes(HOSTILE.encode())
    (repo / "lib.sh").write_bytes(b"export FROM_LIB=1\n")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    source = DirectorySource(repo)
    with read_only_inside(repo.resolve()):
        result = evaluate_script(source, "benchmarks/x.sh", {"TARGET": str(target)})
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert before == after
    assert (target / "keep" / "file").read_bytes() == b"original\n"
    assert not Path("/tmp/heredoc-python").exists()
    assert result.status == "launched"
    assert result.argv == ("vllm", "serve", "m", "--x", "x")
    assert result.env == {"FROM_LIB": "1"}
    assert f"{target}/written" in result.files  # written in memory only


@pytest.mark.parametrize(
    ("script", "limit"),
    [
        ("for ((i=0; ; i++)); do :; done\nvllm serve m\n", "loop"),
        ("while true; do X=1; done\n", "loop"),
        ("f() { f; }\nf\n", "nesting"),
        ('A=x\nfor i in $(seq 1 64); do A="$A$A"; done\nvllm serve "$A"\n', "characters"),
        ('A=(x)\nfor i in $(seq 1 64); do A=("${A[@]}" "${A[@]}"); done\n', "elements"),
        ("X=" + "$(" * 400 + "echo" + ")" * 400 + "\n", "nesting"),
        ("if true; then " * 300 + "vllm serve m" + "; fi" * 300 + "\n", "nesting"),
        ("for a in $(seq 1 400); do for b in $(seq 1 400); do :; done; done\n", "step"),
        ("for i in $(seq 1 100000); do :; done\n", "words"),
    ],
    ids=[
        "c-for-forever",
        "while-true",
        "recursion",
        "string-blowup",
        "array-blowup",
        "deep-substitution",
        "deep-if",
        "long-loop",
        "huge-word-list",
    ],
)
def test_budget_stops_pathological_scripts(tmp_path: Path, script: str, limit: str) -> None:
    (tmp_path / "x.sh").write_text(script)
    limits = Limits(max_steps=100_000, max_loop_iterations=5_000, max_array=10_000)
    with pytest.raises(BudgetExceeded) as caught:
        evaluate_script(DirectorySource(tmp_path), "x.sh", {}, limits=limits)
    assert str(caught.value).startswith("x.sh")
    assert limit in str(caught.value)


def test_giant_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("echo hi\n" * 200_000)
    with pytest.raises(BudgetExceeded, match="larger than"):
        evaluate_script(DirectorySource(tmp_path), "x.sh", {})


def test_self_referential_arithmetic_is_unknown_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "x.sh").write_text("A=A\nB=$((A + 1 / 0))\nC=$((A))\nvllm serve m $B $C\n")
    result = evaluate_script(DirectorySource(tmp_path), "x.sh", {})
    assert result.status == "launched"
    assert len(result.unresolved) == 2


# --- random and mutated scripts ------------------------------------------------------------------

FRAGMENTS = [
    "vllm serve m", "$X", "${X:-a}", "${X#*/}", "${A[@]}", '"$@"', "$((1+2))", "$(echo hi)",
    "`echo x`", "'q'", '"d $X"', "$'\\t'", "X=1", "A=(a b)", "A+=(c)", "export X", "local Y",
    "if [ -n \"$X\" ]; then", "elif [[ $X == a* ]]; then", "else", "fi", "case $X in", "a)",
    ";;", "*) echo", "esac", "for i in 1 2; do", "for ((i=0;i<3;i++)); do", "while false; do",
    "done", "f() {", "}", "f", "(( i++ ))", "{", "(", ")", "|", "&&", "||", ";", "&", "\n",
    "<<EOF\nbody $X\nEOF\n", "> out", "2>&1", "<<< x", "exit 1", "return", "break", "source lib.sh",
    "eval \"$X\"", "set -e", "trap f EXIT", "shift", "read -r a", "printf '%q ' a", "|| exit",
    "[[", "]]", "[", "]", "${", "$(", "\"", "'", "\\", "#", "}", "))",
]  # fmt: skip


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40), st.sampled_from([" ", "\n", ""]))
def test_random_scripts_never_raise_untyped(parts: list[str], glue: str) -> None:
    _evaluate_safely(glue.join(parts))


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    st.sampled_from(SCRIPTS),
    st.lists(
        st.tuples(st.integers(0, 10_000), st.integers(0, 8), st.binary(max_size=6)), max_size=6
    ),
)
def test_mutated_fixture_scripts_never_raise_untyped(
    path: Path, edits: list[tuple[int, int, bytes]]
) -> None:
    data = bytearray(path.read_bytes())
    for position, delete, insert in edits:
        at = position % (len(data) + 1)
        data[at : at + delete] = insert
    _evaluate_safely(bytes(data).decode("utf-8", "replace"))


SHELL_CHARS = list("$(){}[]\"'`\\<>|&;#=*?!~ \n\tabcxyz019-+/%:,.@^")


@settings(
    max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(st.text(alphabet=st.sampled_from(SHELL_CHARS), max_size=120))
def test_random_characters_never_raise_untyped(text: str) -> None:
    _evaluate_safely(text)


def _evaluate_safely(text: str) -> None:
    import tempfile

    original = subprocess.Popen
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "benchmarks").mkdir()
        (root / "benchmarks" / "x.sh").write_text(text)
        (root / "lib.sh").write_text("export L=1\nf() { echo lib; }\n")
        (root / "benchmarks" / "benchmark_lib.sh").write_text(
            (DATA / "benchmarks" / "benchmark_lib.sh").read_text()
        )
        before = sorted(root.rglob("*"))

        def refuse(*args: object, **kwargs: object) -> None:
            raise Executed("process started")

        subprocess.Popen = refuse  # type: ignore[assignment,misc]
        try:
            evaluate_script(
                DirectorySource(root),
                "benchmarks/x.sh",
                ENV,
                limits=Limits(max_steps=20_000, max_loop_iterations=2_000),
            )
        except ExtractionError:
            pass
        finally:
            subprocess.Popen = original  # type: ignore[misc]
        assert sorted(root.rglob("*")) == before


def test_missing_or_escaping_script_is_an_extraction_error(tmp_path: Path) -> None:
    for path in ("missing.sh", "../outside.sh"):
        with pytest.raises(ExtractionError):
            evaluate_script(DirectorySource(tmp_path), path, {})
