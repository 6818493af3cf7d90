LIB = "benchmarks/benchmark_lib.sh"  # the registered library: check_env_vars is modelled
CHECKS = """source "$(dirname "$0")/benchmark_lib.sh"
check_env_vars MODEL CONC
vllm serve "$MODEL"
"""


def test_a_variable_only_checked_for_emptiness_counts_as_that(tmp_path: Path) -> None:
    """check_env_vars reads of an input variable only whether it is empty: one entry serves
    every non-empty value, an empty one (the script exits) and an opaque one are apart, and
    a variable the script replaced first counts whole."""
    _write(tmp_path, {SCRIPT: CHECKS, LIB: "check_env_vars() {\n  :\n}\n"})
    envs = [{"MODEL": "m", "CONC": conc} for conc in ("1", "64", "", "<CONC:opaque:x>", "8", "")]
    cache = _check(tmp_path, envs)
    assert (cache.hits, cache.misses) == (2, 4)
    ended = evaluate_script(DirectorySource(tmp_path), SCRIPT, envs[2], cache=cache)
    assert ended.status != "launched"
    _write(tmp_path, {SCRIPT: "CONC=${CONC%4}\n" + CHECKS})  # "4" becomes empty
    cache = _check(tmp_path, [{"MODEL": "m", "CONC": conc} for conc in ("1", "4", "64", "1")])
    assert (cache.hits, cache.misses) == (1, 3)
