"""The evaluation cache: a result is reused only while every file it read is unchanged."""

from __future__ import annotations

import subprocess
from dataclasses import fields
from pathlib import Path

from bot.benchmarks.extractor import evaluate_script
from bot.shell import EvaluationCache, JobTooLarge, ScriptParser, job_budget
from bot.sources import DirectorySource, GitTreeSource

SCRIPT = "benchmarks/case.sh"
CASE = """#!/bin/bash
source "$(dirname "$0")/lib.sh"
if [[ -f benchmarks/extra.conf ]]; then EXTRA=--enforce-eager; fi
vllm serve "$MODEL" --max-num-seqs "$SEQS" $EXTRA
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return done.stdout.decode().strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    _write(repo, files)
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def test_a_changed_sourced_library_invalidates_the_entry(tmp_path: Path) -> None:
    """Same script, same environment: the second commit changes only the library the script
    sources, so the cached line must not be reused; a third commit touching an unrelated file
    reuses it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    first = _commit(repo, {SCRIPT: CASE, "benchmarks/lib.sh": "SEQS=256\n"}, "one")
    second = _commit(repo, {"benchmarks/lib.sh": "SEQS=512\n"}, "library only")
    third = _commit(repo, {"README.md": "unrelated\n"}, "unrelated")
    cache = EvaluationCache()
    env = {"MODEL": "org/model"}

    def line(ref: str) -> tuple[str, ...]:
        return evaluate_script(GitTreeSource(repo, ref), SCRIPT, env, cache=cache).argv

    assert line(first)[-2:] == ("--max-num-seqs", "256")
    assert (cache.hits, cache.misses) == (0, 1)
    assert line(second)[-2:] == ("--max-num-seqs", "512")  # the library changed: evaluated
    assert (cache.hits, cache.misses) == (0, 2)
    assert line(third)[-2:] == ("--max-num-seqs", "512")  # README.md was never read: reused
    assert (cache.hits, cache.misses) == (1, 2)
    assert line(first)[-2:] == ("--max-num-seqs", "256")  # the older variant is kept too
    assert (cache.hits, cache.misses) == (2, 2)


def test_an_absent_file_that_appears_invalidates_the_entry(tmp_path: Path) -> None:
    """``[[ -f … ]]`` on a missing file is part of the read-set: creating it re-evaluates."""
    _write(tmp_path, {SCRIPT: CASE, "benchmarks/lib.sh": "SEQS=8\n"})
    cache = EvaluationCache()
    env = {"MODEL": "m"}
    before = evaluate_script(DirectorySource(tmp_path), SCRIPT, env, cache=cache)
    assert "--enforce-eager" not in before.argv
    _write(tmp_path, {"benchmarks/extra.conf": "x\n"})
    after = evaluate_script(DirectorySource(tmp_path), SCRIPT, env, cache=cache)
    assert "--enforce-eager" in after.argv and cache.hits == 0
    other = evaluate_script(DirectorySource(tmp_path), SCRIPT, {"MODEL": "n"}, cache=cache)
    assert other.argv[2] == "n" and cache.misses == 3  # the environment is part of the key


def test_a_hit_charges_the_job_budget_like_the_evaluation_did(tmp_path: Path) -> None:
    """Limits do not depend on caching: a reused evaluation costs the job its steps."""
    _write(tmp_path, {SCRIPT: CASE, "benchmarks/lib.sh": "SEQS=8\n"})
    cache = EvaluationCache()
    source = DirectorySource(tmp_path)
    with job_budget(10_000_000, 60.0) as job:
        evaluate_script(source, SCRIPT, {"MODEL": "m"}, cache=cache)
        cold = job.steps
        evaluate_script(source, SCRIPT, {"MODEL": "m"}, cache=cache)
        assert cache.hits == 1 and job.steps == 2 * cold > 0
    try:
        with job_budget(cold + cold // 2, 60.0):
            evaluate_script(source, SCRIPT, {"MODEL": "m"}, cache=cache)
            evaluate_script(source, SCRIPT, {"MODEL": "m"}, cache=cache)
    except JobTooLarge:
        pass
    else:
        raise AssertionError("a cached evaluation must still count against the job")


def test_the_cache_is_bounded(tmp_path: Path) -> None:
    _write(tmp_path, {SCRIPT: CASE, "benchmarks/lib.sh": "SEQS=8\n"})
    cache = EvaluationCache(max_entries=3)
    source = DirectorySource(tmp_path)
    for index in range(6):
        evaluate_script(source, SCRIPT, {"MODEL": f"m{index}"}, cache=cache)
    assert len(cache) == 3
    evaluate_script(source, SCRIPT, {"MODEL": "m5"}, cache=cache)
    evaluate_script(source, SCRIPT, {"MODEL": "m0"}, cache=cache)
    assert (cache.hits, cache.misses) == (1, 7)


def test_a_memoised_parse_still_counts_as_a_read(tmp_path: Path) -> None:
    """A snapshot's parser parses the script once; the second point's evaluation takes it
    from that memo and must still list it, or a later change of the script would be missed."""
    _write(tmp_path, {SCRIPT: CASE, "benchmarks/lib.sh": "SEQS=8\n"})
    cache = EvaluationCache()
    source = DirectorySource(tmp_path)
    parser = ScriptParser()
    evaluate_script(source, SCRIPT, {"MODEL": "a"}, parser=parser, cache=cache)
    evaluate_script(source, SCRIPT, {"MODEL": "b"}, parser=parser, cache=cache)
    _write(tmp_path, {SCRIPT: CASE.replace("--max-num-seqs", "--max-model-len")})
    line = evaluate_script(DirectorySource(tmp_path), SCRIPT, {"MODEL": "b"}, cache=cache)
    assert "--max-model-len" in line.argv and cache.hits == 0


LIB = "benchmarks/benchmark_lib.sh"  # the registered library (bot.benchmarks.library)
USES_LIB = """#!/bin/bash
source "$(dirname "$0")/benchmark_lib.sh"
set_seqs
serve
"""
SERVE = 'vllm serve "$MODEL" --max-num-seqs "$SEQS" --block-size "$BLOCK"'


def _library(
    gpu: str = "echo gpu", seqs: str = "SEQS=256", serve: str = SERVE, client: str = "echo c"
) -> str:
    """A library with a helper above everything the script uses, ``set_seqs`` (a side-effect
    helper: analysed, not run), ``serve`` (it launches: run) and ``run_client`` (after the
    launch, never read)."""
    return (
        f"gpu_info() {{\n  {gpu}\n}}\nexport BLOCK=16\nset_seqs() {{\n  {seqs}\n}}\n"
        f"serve() {{\n  {serve}\n}}\nrun_client() {{\n  {client}\n}}\n"
    )


def _evaluate(root: Path, cache: EvaluationCache | None) -> tuple[object, ...]:
    """Every field of the result (a ScriptResult compares by identity)."""
    found = evaluate_script(DirectorySource(root), SCRIPT, {"MODEL": "m"}, cache=cache)
    return tuple(getattr(found, f.name) for f in fields(found))


def test_a_library_edit_in_what_the_evaluation_never_read_reuses_it(tmp_path: Path) -> None:
    """The library changes in the body of a helper the evaluation never read, or in one it
    only analysed without changing what the analysis reads, or a helper above moves what it
    ran to other lines: the cached result holds (and equals a fresh evaluation, its library
    lines moved). A change to what the analysis reads or to a body the evaluation ran
    evaluates again."""
    _write(tmp_path, {SCRIPT: USES_LIB, LIB: _library()})
    cache = EvaluationCache()
    first = _evaluate(tmp_path, cache)
    launched = evaluate_script(DirectorySource(tmp_path), SCRIPT, {"MODEL": "m"})
    assert launched.status == "launched" and launched.argv[-2:] == ("--block-size", "16")
    assert (cache.hits, cache.misses, cache.library_hits) == (0, 1, 0)
    reused = [
        _library(client="aiperf profile \\\n    --warmup 300"),  # never read
        _library(seqs="SEQS=1024"),  # analysed: it still assigns SEQS and nothing else
    ]
    for hits, text in enumerate(reused, start=1):
        _write(tmp_path, {LIB: text})
        assert _evaluate(tmp_path, cache) == first == _evaluate(tmp_path, None)
        assert (cache.hits, cache.misses, cache.library_hits) == (hits, 1, hits)
    # everything the evaluation ran two lines lower: reused, its library lines moved
    _write(tmp_path, {LIB: _library(gpu="echo one\n  echo two\n  echo three")})
    moved = _evaluate(tmp_path, cache)
    assert cache.moved_hits == 1 and moved != first and moved == _evaluate(tmp_path, None)
    hits = cache.hits
    evaluated = [
        _library(seqs="SEQS=1024; BLOCK=32"),  # the analysis finds another assignment
        _library(serve=SERVE + " --enforce-eager"),  # the body run to the launch
    ]
    for misses, text in enumerate(evaluated, start=2):
        _write(tmp_path, {LIB: text})
        _evaluate(tmp_path, cache)
        assert (cache.hits, cache.misses) == (hits, misses)


def test_a_library_read_as_data_counts_byte_for_byte(tmp_path: Path) -> None:
    """A script that reads the library's text (``$(<file)``) depends on every byte of it."""
    reads = USES_LIB.replace("set_seqs\n", f'set_seqs\nTEXT="$(< {LIB})"\n')
    _write(tmp_path, {SCRIPT: reads, LIB: _library()})
    cache = EvaluationCache()
    _evaluate(tmp_path, cache)
    _write(tmp_path, {LIB: _library(client="aiperf profile --warmup 300")})
    _evaluate(tmp_path, cache)
    assert (cache.hits, cache.misses, cache.library_hits) == (0, 2, 0)
