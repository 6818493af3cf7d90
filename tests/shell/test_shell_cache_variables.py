"""The evaluation cache across input environments: an entry holds for another environment of
the same names where every input variable the evaluation read (looked up, compared with what
the script assigned, or passed on wholesale to a child script) has the same value."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from bot.benchmarks.extractor import HANDLERS, evaluate_script
from bot.shell import EvaluationCache
from bot.shell.shared import SharedEvaluations
from bot.sources import DirectorySource

SCRIPT = "benchmarks/case.sh"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _fields(root: Path, env: dict[str, str], cache: EvaluationCache | None) -> tuple[object, ...]:
    found = evaluate_script(DirectorySource(root), SCRIPT, env, cache=cache)
    return tuple(getattr(found, f.name) for f in fields(found))


def _check(root: Path, envs: list[dict[str, str]]) -> EvaluationCache:
    """Every environment in turn through one cache: each result equals a fresh evaluation."""
    cache = EvaluationCache()
    for env in envs:
        assert _fields(root, env, cache) == _fields(root, env, None), env
    return cache


def test_a_variable_never_read_does_not_split_the_entry(tmp_path: Path) -> None:
    _write(tmp_path, {SCRIPT: 'vllm serve "$MODEL" --max-num-seqs "$SEQS"\n'})
    envs = [{"MODEL": "m", "SEQS": "8", "CONC": conc} for conc in ("1", "2", "64")]
    cache = _check(tmp_path, envs)
    assert (cache.hits, cache.misses) == (2, 1)  # CONC is never read: one evaluation
    cache = _check(tmp_path, [{"MODEL": "m", "SEQS": seqs, "CONC": "1"} for seqs in "12"])
    assert (cache.hits, cache.misses) == (0, 2)  # SEQS reaches the launch


def test_a_variable_read_only_in_a_condition_or_a_function_splits_it(tmp_path: Path) -> None:
    script = (
        "pick() {\n  if (( CONC > 32 )); then FLAG=--enforce-eager; fi\n}\n"
        'pick\nvllm serve "$MODEL" $FLAG\n'
    )
    _write(tmp_path, {SCRIPT: script})
    envs = [{"MODEL": "m", "CONC": conc} for conc in ("1", "64", "1", "64")]
    cache = _check(tmp_path, envs)
    assert (cache.hits, cache.misses) == (2, 2)


def test_an_input_variable_the_script_replaces_counts_as_read(tmp_path: Path) -> None:
    """The launch's env lists an exported variable only where it differs from the input: a
    script that sets it without reading it still depends on the input's value."""
    for setting in ("export CONC=4", "serve() { local CONC=4; export CONC; vllm serve m; }"):
        launch = "\nvllm serve m\n" if setting.startswith("export") else "\nserve\n"
        _write(tmp_path, {SCRIPT: setting + launch})
        cache = _check(tmp_path, [{"CONC": conc} for conc in ("4", "8", "4", "8")])
        assert cache.misses == 2, setting
        launched = evaluate_script(DirectorySource(tmp_path), SCRIPT, {"CONC": "8"}, cache=cache)
        assert launched.env.get("CONC") == "4", setting


def test_a_child_script_inherits_every_variable(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            SCRIPT: "bash benchmarks/child.sh\n",
            "benchmarks/child.sh": 'vllm serve m --max-num-seqs "$CONC"\n',
        },
    )
    envs = [{"CONC": conc, "OTHER": other} for conc, other in (("1", "a"), ("2", "a"), ("1", "b"))]
    cache = _check(tmp_path, envs)
    assert cache.misses == 3  # passed on wholesale: every value counts


def test_the_names_of_the_environment_stay_part_of_the_key(tmp_path: Path) -> None:
    _write(tmp_path, {SCRIPT: 'vllm serve "$MODEL" ${EXTRA:+--enforce-eager}\n'})
    cache = _check(tmp_path, [{"MODEL": "m"}, {"MODEL": "m", "EXTRA": "1"}, {"MODEL": "m"}])
    assert (cache.hits, cache.misses) == (1, 2)


def test_another_process_takes_an_entry_by_the_variables_it_read(tmp_path: Path) -> None:
    root, store = tmp_path / "repo", tmp_path / "store"
    store.mkdir()
    _write(root, {SCRIPT: 'vllm serve "$MODEL" --max-num-seqs "$SEQS"\n'})

    def cache() -> EvaluationCache:
        return EvaluationCache(shared=SharedEvaluations(store, (HANDLERS,)))

    _fields(root, {"MODEL": "m", "SEQS": "8", "CONC": "1"}, cache())
    for env, shared_hits in (
        ({"MODEL": "m", "SEQS": "8", "CONC": "64"}, 1),  # CONC is never read
        ({"MODEL": "m", "SEQS": "16", "CONC": "1"}, 0),  # SEQS is
    ):
        other = cache()
        assert _fields(root, env, other) == _fields(root, env, None)
        assert other.shared is not None and other.shared.hits == shared_hits, env


LIB = "benchmarks/benchmark_lib.sh"  # the registered library: check_env_vars is modelled
CHECKS = """source "$(dirname "$0")/benchmark_lib.sh"
check_env_vars MODEL CONC
vllm serve "$MODEL"
"""


def test_a_variable_only_checked_for_emptiness_counts_as_that(tmp_path: Path) -> None:
    """check_env_vars reads of an input variable only whether it is empty: one entry serves
    every non-empty value (an opaque one too: unknown, so not empty), an empty one (the script
    exits) is apart, and a variable the script replaced first counts whole."""
    _write(tmp_path, {SCRIPT: CHECKS, LIB: "check_env_vars() {\n  :\n}\n"})
    values = ("1", "64", "", "<CONC:opaque:x>", "8", "")
    cache = _check(tmp_path, [{"MODEL": "m", "CONC": conc} for conc in values])
    assert (cache.hits, cache.misses) == (4, 2)
    source = DirectorySource(tmp_path)
    ended = evaluate_script(source, SCRIPT, {"MODEL": "m", "CONC": ""}, cache=cache)
    assert ended.status != "launched"
    _write(tmp_path, {SCRIPT: "CONC=${CONC%4}\n" + CHECKS})  # "4" becomes empty
    cache = _check(tmp_path, [{"MODEL": "m", "CONC": conc} for conc in ("1", "4", "64", "1")])
    assert (cache.hits, cache.misses) == (1, 3)
