"""Constructs met in the real benchmark repository, reproduced with synthetic scripts."""

from __future__ import annotations

from tests.shell.conftest import SCRIPT, Runner

ENV = {"MODEL": "acme/Foo-7B", "TP": "4", "CONC": "8", "ISL": "1024", "OSL": "1024"}

# A library whose GPU monitor assigns and exports the CSV path globally, as the current
# benchmark library does (older ones only used locals).
MONITOR_LIBRARY = """
export PORT="${PORT:-8888}"
GPU_MONITOR_PID=""
GPU_METRICS_CSV="${GPU_METRICS_CSV:-gpu_metrics.csv}"
export GPU_METRICS_CSV
start_gpu_monitor() {
    local output="$GPU_METRICS_CSV"
    local interval=1
    while [[ $# -gt 0 ]]; do
        case $1 in
            --output)   output="$2"; shift 2 ;;
            --interval) interval="$2"; shift 2 ;;
            *)          shift ;;
        esac
    done
    GPU_METRICS_CSV="$output"
    GPU_MONITOR_INTERVAL="$interval"
    export GPU_METRICS_CSV
    if command -v nvidia-smi &>/dev/null; then
        GPU_MONITOR_VENDOR="nvidia"
        nvidia-smi --format=csv -l "$interval" > "$output" &
        GPU_MONITOR_PID=$!
    fi
}
stop_gpu_monitor() {
    kill "$GPU_MONITOR_PID" 2>/dev/null
    GPU_MONITOR_PID=""
    GPU_MONITOR_VENDOR=""
}
"""
LIB = {"benchmarks/benchmark_lib.sh": MONITOR_LIBRARY}
HEAD = 'source "$(dirname "$0")/../../benchmark_lib.sh"\n'


def test_gpu_monitor_keeps_the_csv_path_known(run_script: Runner) -> None:
    script = HEAD + 'start_gpu_monitor\nvllm serve "$MODEL" --port "$PORT"\nstop_gpu_monitor\n'
    result = run_script(script, ENV, files=LIB)
    assert result.status == "launched"
    assert result.argv == ("vllm", "serve", "acme/Foo-7B", "--port", "8888")
    assert result.unresolved == ()
    assert dict(result.env)["GPU_METRICS_CSV"] == "gpu_metrics.csv"


def test_gpu_monitor_output_option_moves_the_csv(run_script: Runner) -> None:
    script = HEAD + "start_gpu_monitor --interval 2 --output /tmp/m.csv\nvllm serve m\n"
    result = run_script(script, ENV, files=LIB)
    assert result.unresolved == ()
    assert dict(result.env)["GPU_METRICS_CSV"] == "/tmp/m.csv"


def test_gpu_monitor_vendor_is_a_host_fact(run_script: Runner) -> None:
    script = HEAD + 'start_gpu_monitor\nvllm serve m --tag "$GPU_MONITOR_VENDOR"\n'
    result = run_script(script, ENV, files=LIB)
    assert result.argv[-1].startswith("<GPU_MONITOR_VENDOR:opaque:host-probe>")
    assert [u.what for u in result.unresolved] == ["$GPU_MONITOR_VENDOR"]


def test_gpu_monitor_without_a_library_definition_is_an_unknown_command(
    run_script: Runner,
) -> None:
    result = run_script("start_gpu_monitor\nvllm serve m\n", ENV)
    assert "GPU_METRICS_CSV" not in dict(result.env)


def test_mapfile_from_a_process_substitution_reads_its_output(run_script: Runner) -> None:
    # `mapfile -t ARGS < <(helper)`: a library helper prints serve flags one per line
    script = (
        "acme_extra_args() {\n"
        '    if [[ "${PROFILE:-0}" == "1" ]]; then printf \'%s\\n\' --profiler-config x; fi\n'
        "    printf '%s\\n' --max-num-seqs 16\n"
        "}\n"
        "EXTRA=()\n"
        "mapfile -t EXTRA < <(acme_extra_args)\n"
        'vllm serve "$MODEL" "${EXTRA[@]}"\n'
    )
    result = run_script(script, ENV)
    assert result.argv == ("vllm", "serve", "acme/Foo-7B", "--max-num-seqs", "16")
    assert result.unresolved == ()


def test_process_substitution_of_an_unknown_command_names_the_command(
    run_script: Runner,
) -> None:
    script = 'EXTRA=()\nmapfile -t EXTRA < <(acme_undefined_helper)\nvllm serve m "${EXTRA[@]}"\n'
    result = run_script(script, ENV)
    assert result.status == "launched"
    assert [u.what for u in result.unresolved] == ["output of `acme_undefined_helper`"]
    assert "file name" not in result.unresolved[0].why


def test_read_from_a_process_substitution_of_python(run_script: Runner) -> None:
    # `read -r A B < <(python3 - <<'PY' … PY)`: ports picked by a Python snippet at run time
    script = (
        "read -r PORT BACKEND < <(python3 - <<'PY'\n"
        "print(1, 2)\n"
        "PY\n"
        ")\n"
        'vllm serve m --port "$BACKEND"\n'
    )
    result = run_script(script, ENV)
    assert result.status == "launched"
    assert result.argv[-1].startswith("<")
    assert result.unresolved and all("file name" not in u.why for u in result.unresolved)


def test_a_library_function_the_sourced_library_lacks_is_named_as_such(
    run_script: Runner,
) -> None:
    # scripts newer than the library they source call helpers it does not define yet
    script = HEAD + (
        "ARGS=()\n"
        "if acme_profiling_enabled; then ARGS+=(--enforce-eager); fi\n"
        'vllm serve m "${ARGS[@]}"\n'
    )
    result = run_script(script, ENV, files=LIB)
    assert result.status == "launched"
    why = " ".join(u.why for u in (*result.unresolved, *result.assumptions))
    assert "`acme_profiling_enabled` is not defined by the script or the files it sources" in why
    assert "benchmarks/benchmark_lib.sh" in why
    # the undecidable branch says which helper it would take to decide it: two alternative
    # launch lines, the flag that differs between them is the unknown
    assert [a.argv for a in result.alternatives] == [
        ("vllm", "serve", "m", "--enforce-eager"),
        ("vllm", "serve", "m"),
    ]
    (item,) = [u for u in result.unresolved if u.what == "--enforce-eager"]
    assert (
        "the condition `acme_profiling_enabled`" in item.why
        and ", which runs an unknown command: `acme_profiling_enabled` is not defined" in item.why
    )


def test_an_undecidable_condition_names_the_unknown_it_reads(run_script: Runner) -> None:
    # firmware-dependent env (`version=$(rocm-smi --showfw | …)`; `[[ $version -lt 177 ]]`)
    script = (
        "version=`acme-smi --showfw | grep MEC | head -n 1`\n"
        'if [[ "$version" == "" || $version -lt 177 ]]; then\n'
        "  export ACME_NO_RECLAIM=1\n"
        "fi\n"
        "vllm serve m\n"
    )
    result = run_script(script, ENV)
    (item,) = [u for u in result.unresolved if u.what == "$ACME_NO_RECLAIM"]
    assert 'the condition `[[ "$version" == "" || $version -lt 177 ]]`' in item.why
    assert f", which reads $version: output of `acme-smi --showfw` ({SCRIPT}:1)" in item.why
