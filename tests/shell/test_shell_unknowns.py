"""What the evaluator cannot know is reported (what, why, file:line), never guessed; the
benchmark library's functions are modelled; side effects are assumptions, not actions."""

from __future__ import annotations

from bot.shell.result import Unresolved
from tests.shell.conftest import SCRIPT, Runner

ENV = {
    "MODEL": "acme/Foo-7B",
    "TP": "4",
    "CONC": "16",
    "ISL": "8192",
    "OSL": "1024",
    "MAX_MODEL_LEN": "9472",
    "EVAL_ONLY": "false",
}


def whats(items: tuple[Unresolved, ...]) -> list[str]:
    return [item.what for item in items]


def test_opaque_command_output_is_a_named_placeholder(run_script: Runner) -> None:
    result = run_script(
        """SNAPSHOT=$(python3 - "$MODEL" <<'PY'
import sys
print(sys.argv[1])
PY
)
vllm serve "$SNAPSHOT" --tp "$TP"
""",
        ENV,
    )
    assert result.argv == ("vllm", "serve", "<SNAPSHOT:opaque:command-output>", "--tp", "4")
    (item,) = result.unresolved
    assert item.file == SCRIPT and item.line == 1
    assert item.what == "output of `python3 - acme/Foo-7B`"
    assert (
        item.why
        == "the output of Python code (never executed statically) is only known at run time"
    )


def test_input_placeholders_stay_unknown(run_script: Runner) -> None:
    result = run_script(
        'vllm serve m --port "$PORT" --x $((PORT + 1))\n',
        {**ENV, "PORT": "<PORT:opaque:slurm-job-id>"},
    )
    assert result.argv[:4] == ("vllm", "serve", "m", "--port")
    assert result.argv[4] == "<PORT:opaque:slurm-job-id>"
    assert "opaque" in result.argv[6]
    assert whats(result.unresolved) == ["$PORT"]
    assert "Slurm job id" in result.unresolved[0].why


def test_undecidable_condition_gives_alternatives(run_script: Runner) -> None:
    result = run_script(
        """if [ -d /opt/models/foo ]; then
    MODEL_DIR=/opt/models/foo
else
    MODEL_DIR="$MODEL"
fi
SAME=1
if [ -f /etc/host-flag ]; then SAME=1; fi
vllm serve "$MODEL_DIR" --same $SAME
""",
        ENV,
    )
    # two launch lines, each with the condition selecting it; only the word that differs
    # between them is unknown (the second probe assigns the same value on both sides)
    assert result.argv == (
        "vllm", "serve", "<argv[2]:opaque:undecidable-branch>", "--same", "1",
    )  # fmt: skip
    assert [(a.argv[2], a.conditions) for a in result.alternatives] == [
        ("/opt/models/foo", (f"the condition `[ -d /opt/models/foo ]` ({SCRIPT}:1) holds",)),
        ("acme/Foo-7B", (f"the condition `[ -d /opt/models/foo ]` ({SCRIPT}:1) does not hold",)),
    ]
    (item,) = result.unresolved
    assert item.what == "argv[2]" and item.line == 8
    assert "'/opt/models/foo' when the condition `[ -d /opt/models/foo ]`" in item.why
    assert result.paths == 2


def test_guard_that_only_exits_is_an_assumption_not_an_unknown(run_script: Runner) -> None:
    result = run_script(
        """if [ ! -d "/data/$MODEL" ] || [ -z "$(ls -A "/data/$MODEL")" ]; then
    echo "checkpoint missing" >&2
    exit 1
fi
hf download "$MODEL" --local-dir "/data/$MODEL" || exit 2
pip install -q "vllm==0.0.0"
vllm serve "/data/$MODEL"
""",
        ENV,
    )
    assert result.status == "launched"
    assert result.argv == ("vllm", "serve", "/data/acme/Foo-7B")
    assert result.unresolved == ()
    kinds = " | ".join(f"{a.what}: {a.why}" for a in result.assumptions)
    assert "exit at benchmarks/single_node/fixed_seq_len/case.sh:3" in kinds
    assert "hf download" in kinds and "download skipped" in kinds
    assert "pip install" in kinds and "engine version" in kinds


def test_launch_only_on_one_undecidable_side_is_flagged(run_script: Runner) -> None:
    result = run_script(
        """if [ -e /dev/shm/ready ]; then
    vllm serve fast
fi
vllm serve slow
""",
        ENV,
    )
    # two alternative launch lines, the word between them unknown
    assert result.argv == ("vllm", "serve", "<argv[2]:opaque:undecidable-branch>")
    assert [a.argv[2] for a in result.alternatives] == ["fast", "slow"]
    assert whats(result.unresolved) == ["argv[2]"]


def test_loop_with_undecidable_bound_taints_what_it_assigns(run_script: Runner) -> None:
    result = run_script(
        """N=1
while [ ! -f /tmp/ready ]; do N=$(( N * 2 )); done
vllm serve m --n $N
""",
        ENV,
    )
    assert result.argv == ("vllm", "serve", "m", "--n", "<N:opaque:derived>")
    assert whats(result.unresolved) == ["$N"]
    assert "iteration count" in result.unresolved[0].why


def test_host_probes_and_runtime_values_are_opaque(run_script: Runner) -> None:
    result = run_script(
        """FW=$(rocm-smi --showfw | awk '/MEC/ {print $NF}')
NODE=$(hostname)
vllm serve m --a "$FW" --b "$NODE" --c "$RANDOM" --d "$HOME/x"
""",
        ENV,
    )
    assert all("opaque" in arg for arg in result.argv[4::2])
    assert len(result.unresolved) == 4


def test_library_models_and_top_level(run_script: Runner) -> None:
    script = """source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC
if [ "$EVAL_ONLY" = "true" ]; then
    setup_eval_context
    LEN=$EVAL_MAX_MODEL_LEN
else
    LEN=$MAX_MODEL_LEN
fi
CTX=$(compute_eval_context_length "$MODEL" 4096)
start_gpu_monitor
vllm serve m --max-model-len "$LEN" --ctx "$CTX" --port "$PORT"
"""
    result = run_script(script, {**ENV, "EVAL_ONLY": "true"}, library=True)
    assert result.argv == (
        "vllm", "serve", "m", "--max-model-len", "9472", "--ctx", "4096", "--port", "8888",
    )  # fmt: skip
    assert dict(result.env) == {
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache",
        "PORT": "8888",
        "GPU_METRICS_CSV": "gpu_metrics.csv",
        "EVAL_MAX_MODEL_LEN": "9472",
    }
    assert any("native context" in a.why for a in result.assumptions)


def test_check_env_vars_fails_on_empty(run_script: Runner) -> None:
    script = (
        'source "$(dirname "$0")/../../benchmark_lib.sh"\ncheck_env_vars MODEL CONC\nvllm serve m\n'
    )
    result = run_script(script, {"MODEL": "m", "CONC": ""}, library=True)
    assert result.status == "invalid"
    assert "CONC" in (result.invalid or "")


def test_agentic_library_unsets_max_model_len_and_validates_kv(run_script: Runner) -> None:
    script = """source "$(dirname "$0")/../../benchmark_lib.sh"
if require_agentic_kv_offload_backend lmcache; then
    OFFLOAD=(--kv-transfer-config '{"kv_connector":"LMCacheConnectorV1"}')
else
    OFFLOAD=()
fi
vllm serve m ${MAX_MODEL_LEN:+--max-model-len $MAX_MODEL_LEN} "${OFFLOAD[@]}"
"""
    agentic = "benchmarks/single_node/agentic/case.sh"
    env = {**ENV, "MAX_MODEL_LEN": "0", "IS_AGENTIC": "1", "KV_OFFLOADING": "dram",
           "KV_OFFLOAD_BACKEND": "lmcache", "TOTAL_CPU_DRAM_GB": "524"}  # fmt: skip
    result = run_script(script, env, library=True, path=agentic)
    assert result.argv == (
        "vllm", "serve", "m", "--kv-transfer-config", '{"kv_connector":"LMCacheConnectorV1"}',
    )  # fmt: skip
    assert result.env_unset == ("MAX_MODEL_LEN",)
    none = run_script(script, {**env, "KV_OFFLOADING": "none", "KV_OFFLOAD_BACKEND": ""},
                      library=True, path=agentic)  # fmt: skip
    assert none.argv == ("vllm", "serve", "m")
    bad = run_script(script, {**env, "KV_OFFLOAD_BACKEND": "mooncake"}, library=True, path=agentic)
    assert bad.status == "invalid"
    broken = run_script(script, {**env, "TOTAL_CPU_DRAM_GB": "0"}, library=True, path=agentic)
    assert broken.status == "invalid" and "TOTAL_CPU_DRAM_GB" in (broken.invalid or "")


def test_require_kv_offload_none_and_enabled(run_script: Runner) -> None:
    script = """source "$(dirname "$0")/../../benchmark_lib.sh"
require_agentic_kv_offload_none
if agentic_kv_offload_enabled; then X=on; else X=off; fi
vllm serve m $X
"""
    env = {**ENV, "KV_OFFLOADING": "none", "KV_OFFLOAD_BACKEND": ""}
    assert run_script(script, env, library=True).argv == ("vllm", "serve", "m", "off")
    assert run_script(script, {**env, "KV_OFFLOADING": "dram"}, library=True).status == "invalid"
    assert run_script(script, {**env, "KV_OFFLOADING": ""}, library=True).status == "invalid"


def test_unevaluated_library_helper_marks_what_it_may_assign(run_script: Runner) -> None:
    script = """source "$(dirname "$0")/../../benchmark_lib.sh"
OFFLOAD_ARGS=()
setup_offload_args lmcache
vllm serve m "${OFFLOAD_ARGS[@]}" --port "$PORT"
"""
    result = run_script(script, ENV, library=True)
    assert result.argv == ("vllm", "serve", "m", "--port", "8888")
    (item,) = result.unresolved
    assert item.what == "$OFFLOAD_ARGS" and item.line == 3
    assert "setup_offload_args" in item.why


def test_stale_library_path_falls_back_with_an_assumption(run_script: Runner) -> None:
    script = 'source "$(dirname "$0")/../../benchmark_lib.sh"\nvllm serve m --port "$PORT"\n'
    deprecated = "benchmarks/single_node/fixed_seq_len/deprecated/case.sh"
    result = run_script(script, ENV, library=True, path=deprecated)
    assert result.argv == ("vllm", "serve", "m", "--port", "8888")
    assert any("benchmarks/benchmark_lib.sh" in a.why for a in result.assumptions)


def test_missing_library_is_reported(run_script: Runner) -> None:
    result = run_script('source "$(dirname "$0")/../../nope.sh"\nvllm serve m\n', ENV)
    assert result.argv == ("vllm", "serve", "m")
    assert any(u.what.startswith("source ") for u in result.unresolved)


def test_sibling_script_runs_as_a_child_with_exported_env(run_script: Runner) -> None:
    result = run_script(
        "export EXTRA=--enforce-eager\nLOCAL=not-exported\n"
        'exec env MTP=1 bash "$(dirname "$0")/impl.sh"\n',
        ENV,
        files={
            "benchmarks/single_node/fixed_seq_len/impl.sh": (
                'vllm serve "$MODEL" $EXTRA "${LOCAL:-unset}" "$MTP" "$0"\n'
            )
        },
    )
    assert result.argv == (
        "vllm", "serve", "acme/Foo-7B", "--enforce-eager", "unset", "1",
        "benchmarks/single_node/fixed_seq_len/impl.sh",
    )  # fmt: skip


def test_unparsable_text_is_reported_not_guessed(run_script: Runner) -> None:
    result = run_script('if [ "$TP" = 4 ; then\nvllm serve m\n', ENV)
    assert result.unresolved or result.status != "launched"


def test_download_retry_loop_assumes_success(run_script: Runner) -> None:
    result = run_script(
        """for attempt in 1 2 3; do
    hf download "$MODEL" && break
    if [ "$attempt" = 3 ]; then echo "download failed" >&2; exit 1; fi
    sleep 60
done
pip install -q extra || exit 1
vllm serve "$MODEL"
""",
        ENV,
    )
    assert result.status == "launched" and result.unresolved == ()
    assert result.argv == ("vllm", "serve", "acme/Foo-7B")


def test_branch_merge_keeps_the_root_cause(run_script: Runner) -> None:
    result = run_script(
        """SNAP=$(python3 -c 'print(1)')
if [[ -z "$SNAP" ]]; then SNAP=/fallback/$MODEL; fi
vllm serve "$SNAP"
""",
        ENV,
    )
    # the root cause (the Python output) and the word the two alternatives differ in
    assert sorted(u.line or 0 for u in result.unresolved) == [1, 3]
    assert (
        f'the condition `[[ -z "$SNAP" ]]` ({SCRIPT}:2) does not hold' in result.unresolved[-1].why
    )


def test_syntax_errors_in_functions_never_called_are_not_reported(run_script: Runner) -> None:
    result = run_script('unused() {\n    if [ "$X" = 1 ; then echo; fi\n}\nvllm serve m\n', ENV)
    assert result.status == "launched" and result.unresolved == ()


def test_filtering_an_unknown_text_stays_unknown(run_script: Runner) -> None:
    # counting the lines of a host probe's output is not 0: the result is a placeholder
    result = run_script(
        "NUM_GPUS=$(nvidia-smi -L | wc -l)\n"
        'vllm serve "$MODEL" --tensor-parallel-size "$NUM_GPUS"\n',
        ENV,
    )
    assert result.argv == (
        "vllm",
        "serve",
        "acme/Foo-7B",
        "--tensor-parallel-size",
        "<wc:opaque:derived>",
    )
    assert whats(result.unresolved) == ["output of `nvidia-smi -L`"]
    assert result.unresolved[0].line == 1


def test_a_placeholder_reads_as_the_variable_the_script_wrote() -> None:
    from bot.placeholders import as_variables, placeholder

    url = f"http://localhost:{placeholder('PORT', 'runner-node')}/metrics"
    assert as_variables(url) == "http://localhost:$PORT/metrics"
    expression = placeholder("$((TP*2))", "arithmetic")
    assert as_variables(expression) == "<$((TP*2))>"  # no variable: named, not expanded
    assert as_variables("plain value") == "plain value"
