#!/usr/bin/env bash
# Synthetic stand-in for the benchmark library: same entry points, written for the tests.

check_env_vars() {
    local missing=()
    local name
    for name in "$@"; do
        if [[ -z "${!name:-}" ]]; then
            missing+=("$name")
        fi
    done
    if (( ${#missing[@]} > 0 )); then
        echo "Error: missing required variables: ${missing[*]}" >&2
        exit 1
    fi
}

# Launchers may source the library for its validation helpers only.
if [[ "${1-}" == "--validation-only" ]]; then
    return 0
fi

export PYTHONDONTWRITEBYTECODE=1
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-/tmp/inferencex-pycache}"
mkdir -p "$PYTHONPYCACHEPREFIX" 2>/dev/null || true
export PORT="${PORT:-8888}"
BENCH_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

agentic_kv_offload_enabled() {
    if [[ -z "${KV_OFFLOADING:-}" ]]; then
        echo "Error: KV_OFFLOADING must be set" >&2
        exit 1
    fi
    [[ "$KV_OFFLOADING" != "none" ]]
}

require_agentic_kv_offload_none() {
    if agentic_kv_offload_enabled; then
        echo "Error: this recipe does not offload the KV cache" >&2
        exit 1
    fi
}

require_agentic_kv_offload_backend() {
    local want="$1"
    case "${KV_OFFLOADING:-}" in
        none) return 1 ;;
        dram)
            [[ "${KV_OFFLOAD_BACKEND:-}" == "$want" ]] || { echo "Error: backend" >&2; exit 1; }
            return 0 ;;
        *) echo "Error: KV_OFFLOADING" >&2; exit 1 ;;
    esac
}

# Agentic callers replay traces at the model's native context: drop the workflow's cap.
caller="${BASH_SOURCE[1]:-}"
if [[ "$caller" == */agentic/* || "${IS_AGENTIC-}" == "1" ]]; then
    unset MAX_MODEL_LEN
    case "${KV_OFFLOADING:-}" in
        none)
            if [[ -n "${KV_OFFLOAD_BACKEND:-}" ]]; then
                echo "Error: KV_OFFLOAD_BACKEND must be empty without offloading" >&2
                exit 1
            fi
            ;;
        dram)
            if [[ ! "${TOTAL_CPU_DRAM_GB:-}" =~ ^[1-9][0-9]*$ ]]; then
                echo "Error: DRAM offloading needs TOTAL_CPU_DRAM_GB" >&2
                exit 1
            fi
            ;;
        *)
            echo "Error: KV_OFFLOADING must be none or dram" >&2
            exit 1
            ;;
    esac
fi
unset caller

GPU_METRICS_CSV="${GPU_METRICS_CSV:-gpu_metrics.csv}"
export GPU_METRICS_CSV

start_gpu_monitor() {
    local out="${1:-$GPU_METRICS_CSV}"
    nvidia-smi --query-gpu=index,power.draw --format=csv -l 1 > "$out" 2>/dev/null &
    GPU_MONITOR_PID=$!
}

stop_gpu_monitor() {
    kill "$GPU_MONITOR_PID" 2>/dev/null || true
}

wait_for_server_ready() {
    local port=8888
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --port) port="$2"; shift 2 ;;
            *) shift ;;
        esac
    done
    until curl -sf "http://localhost:${port}/health" > /dev/null; do
        sleep 5
    done
}

compute_eval_context_length() {
    local model="$1" wanted="$2"
    local native
    native=$(python3 -c 'import sys; print(1 << 20)' "$model")
    if (( wanted > native )); then wanted=$native; fi
    EVAL_MAX_MODEL_LEN="$wanted"
    echo "$wanted"
}

setup_eval_context() {
    EVAL_MAX_MODEL_LEN=$(compute_eval_context_length "$MODEL" "$((ISL + OSL + 256))")
    export EVAL_MAX_MODEL_LEN
}

# Picks the KV-transfer connector flags for DRAM offloading (side effects: probes the host).
setup_offload_args() {
    local shm
    shm=$(df --output=avail /dev/shm | tail -1)
    OFFLOAD_ARGS=(--kv-transfer-config "{\"kv_connector\":\"$1\",\"shm_kb\":$shm}")
}

run_benchmark_serving() {
    python3 -m vllm.benchmarks.serve "$@"
}

run_eval() {
    python3 -m lm_eval --model local-chat-completions "$@"
}

append_lm_eval_summary() {
    python3 utils/collect.py > meta_env.json
}

install_agentic_deps() {
    pip install -q aiperf
    AIPERF_READY=1
}

resolve_trace_source() {
    TRACE_LOADER="${WEKA_LOADER_OVERRIDE:-synthetic_traces_v1}"
}

build_replay_cmd() {
    REPLAY_CMD="aiperf replay --url http://localhost:$PORT --loader $TRACE_LOADER"
}

run_agentic_replay_and_write_outputs() {
    eval "$REPLAY_CMD" > "$1/replay.log"
}

stop_background_process_tree() {
    kill -- "-$1" 2>/dev/null || true
}
