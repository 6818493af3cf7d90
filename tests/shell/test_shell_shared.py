"""Evaluations shared between the processes of one replay (bot/shell/shared.py): an entry
another process wrote is reused only where its read-set holds, as the process's own are."""

from __future__ import annotations

import multiprocessing
from dataclasses import fields
from pathlib import Path

import pytest

from bot.benchmarks.extractor import HANDLERS, evaluate_script, inferencex_handlers
from bot.shell import EvaluationCache, ExtractionError, job_budget
from bot.shell.shared import SharedEvaluations
from bot.sources import DirectorySource

SCRIPT = "benchmarks/case.sh"
LIB = "benchmarks/benchmark_lib.sh"  # the registered library (bot.benchmarks.library)
CASE = """#!/bin/bash
source "$(dirname "$0")/benchmark_lib.sh"
if [[ -f benchmarks/extra.conf ]]; then EXTRA=--enforce-eager; fi
set_seqs
serve $EXTRA
"""
SERVE = 'vllm serve "$MODEL" --max-num-seqs "$SEQS" --block-size "$BLOCK" "$@"'


def _library(seqs: str = "SEQS=256", serve: str = SERVE, client: str = "echo c") -> str:
    return (
        f"export BLOCK=16\nset_seqs() {{\n  {seqs}\n}}\n"
        f"serve() {{\n  {serve}\n}}\nrun_client() {{\n  {client}\n}}\n"
    )


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _cache(store: Path) -> EvaluationCache:
    """One process's cache, sharing ``store`` with the others."""
    return EvaluationCache(shared=SharedEvaluations(store, (HANDLERS,)))


def _store(cache: EvaluationCache) -> SharedEvaluations:
    assert cache.shared is not None
    return cache.shared


def _evaluate(root: Path, cache: EvaluationCache | None, model: str = "m") -> tuple[object, ...]:
    """Every field of the result (a ScriptResult compares by identity)."""
    found = evaluate_script(DirectorySource(root), SCRIPT, {"MODEL": model}, cache=cache)
    return tuple(getattr(found, f.name) for f in fields(found))


def _argv(fields: tuple[object, ...]) -> tuple[str, ...]:
    argv = fields[2]
    assert isinstance(argv, tuple)
    return argv


def test_another_process_reuses_an_evaluation_only_while_its_reads_hold(tmp_path: Path) -> None:
    """Worker B takes what worker A evaluated (equal to a fresh evaluation, field by field);
    after a change to a file the evaluation read (a run body of the library, a file that
    appears) B evaluates again, and a change to a body never read still reuses it."""
    root, store = tmp_path / "repo", tmp_path / "store"
    store.mkdir()
    _write(root, {SCRIPT: CASE, LIB: _library()})
    first, second = _cache(store), _cache(store)
    fresh = _evaluate(root, None)
    assert fresh[1] == "launched" and _evaluate(root, first) == fresh
    assert first.misses == 1 and _store(first).written == 1
    assert _evaluate(root, second) == fresh
    assert (second.hits, second.misses, _store(second).hits) == (0, 0, 1)
    assert _evaluate(root, second) == fresh and second.hits == 1  # now its own entry

    _write(root, {LIB: _library(client="aiperf profile --warmup 300")})  # never read
    assert _evaluate(root, _cache(store)) == fresh == _evaluate(root, None)

    _write(root, {LIB: _library(serve=SERVE + " --enforce-eager")})  # the body run
    third = _cache(store)
    changed = _evaluate(root, third)
    assert changed == _evaluate(root, None) and "--enforce-eager" in _argv(changed)
    assert (third.misses, _store(third).hits) == (1, 0)

    _write(root, {"benchmarks/extra.conf": "x\n"})  # an absent file the script tested
    fourth = _cache(store)
    appeared = _evaluate(root, fourth)
    assert appeared == _evaluate(root, None) and _argv(appeared).count("--enforce-eager") == 2
    assert (fourth.misses, _store(fourth).hits) == (1, 0)


def test_the_environment_and_the_registry_are_part_of_the_shared_key(tmp_path: Path) -> None:
    root, store = tmp_path / "repo", tmp_path / "store"
    store.mkdir()
    _write(root, {SCRIPT: CASE, LIB: _library()})
    _evaluate(root, _cache(store))
    other = _cache(store)
    assert _argv(_evaluate(root, other, model="n"))[2] == "n"
    assert (other.misses, _store(other).hits) == (1, 0)
    # a registry the store was not made with is never shared: not even by a stale id
    alien = inferencex_handlers()
    cache = EvaluationCache(shared=SharedEvaluations(store, (HANDLERS,)))
    source = DirectorySource(root)
    evaluate_script(source, SCRIPT, {"MODEL": "m"}, handlers=alien, cache=cache)
    assert (cache.misses, _store(cache).hits, _store(cache).written) == (1, 0, 0)


def test_a_shared_failure_and_its_steps_are_the_evaluations(tmp_path: Path) -> None:
    """A script that cannot be evaluated fails the same way from the store, and a shared
    hit charges the job what the evaluation did."""
    root, store = tmp_path / "repo", tmp_path / "store"
    store.mkdir()
    _write(root, {SCRIPT: CASE, LIB: _library()})
    (root / "benchmarks/latin1.sh").write_bytes(b"vllm serve caf\xe9\n")
    source = DirectorySource(root)
    failures = []
    for cache in (_cache(store), _cache(store)):
        with pytest.raises(ExtractionError) as caught:
            evaluate_script(source, "benchmarks/latin1.sh", {"MODEL": "m"}, cache=cache)
        failures.append(
            (type(caught.value), caught.value.file, caught.value.line, str(caught.value))
        )
    assert failures[0] == failures[1] and _store(cache).hits == 1
    steps = []
    for cache in (_cache(store), _cache(store)):
        with job_budget(10_000_000, 60.0) as job:
            evaluate_script(source, SCRIPT, {"MODEL": "m"}, cache=cache)
            steps.append(job.steps)
    assert steps[0] == steps[1] > 0 and _store(cache).hits == 1


def _in_another_process(root: str, store: str) -> tuple[object, ...]:
    return _evaluate(Path(root), _cache(Path(store)))


def test_a_process_of_its_own_registry_shares_with_this_one(tmp_path: Path) -> None:
    """A new interpreter (spawned: its registry is another object at another address) writes
    an evaluation this process takes, and the other way round."""
    root, store = tmp_path / "repo", tmp_path / "store"
    store.mkdir()
    _write(root, {SCRIPT: CASE, LIB: _library()})
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        theirs = pool.apply(_in_another_process, (str(root), str(store)))
        mine = _cache(store)
        assert _evaluate(root, mine) == theirs
        assert (mine.misses, _store(mine).hits) == (0, 1)
        _write(root, {LIB: _library(serve=SERVE + " --enforce-eager")})  # the body run
        again = _evaluate(root, mine)
        assert (
            mine.misses == 1 and pool.apply(_in_another_process, (str(root), str(store))) == again
        )
