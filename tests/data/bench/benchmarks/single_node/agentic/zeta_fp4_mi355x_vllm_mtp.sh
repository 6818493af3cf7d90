#!/usr/bin/env bash
set -eo pipefail
# Zeta-Flash on MI355X: agentic trace replay with MTP speculative decoding (synthetic recipe).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC KV_OFFLOADING RESULT_DIR DURATION

OFFLOAD_ARGS=()
case "${KV_OFFLOAD_BACKEND:-}" in
    "")
        require_agentic_kv_offload_none
        ;;
    lmcache)
        require_agentic_kv_offload_backend lmcache
        export LMCACHE_MAX_LOCAL_CPU_SIZE=$(( TOTAL_CPU_DRAM_GB / TP ))
        OFFLOAD_ARGS=(--kv-transfer-config '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}')
        ;;
    *)
        echo "unsupported KV offload backend: $KV_OFFLOAD_BACKEND" >&2
        exit 1
        ;;
esac

if [[ -n "${MODEL_PATH:-}" && "$MODEL_PATH" != "$MODEL" ]]; then
    hf download "$MODEL" --local-dir "$MODEL_PATH"
else
    hf download "$MODEL"
    export MODEL_PATH="$MODEL"
fi

export VLLM_ROCM_USE_AITER=1
export VLLM_USE_BREAKABLE_CUDAGRAPH=1
resolve_trace_source
install_agentic_deps
mkdir -p "$RESULT_DIR"
SERVER_LOG="$RESULT_DIR/server.log"

MAX_NUM_SEQS=$(( 2 * CONC ))
SPEC_TOKENS=3
CAPTURE_SIZES=()
for (( bs = 1; bs <= MAX_NUM_SEQS * (SPEC_TOKENS + 1) && bs <= 512; bs *= 2 )); do
    CAPTURE_SIZES+=("$bs")
done
CAPTURE_LIST=$(IFS=,; echo "${CAPTURE_SIZES[*]}")

# Evals verify drafts for real; throughput runs fix the acceptance length.
if [ "$EVAL_ONLY" = "true" ]; then
    REJECT='"rejection_sample_method":"block"'
else
    REJECT='"rejection_sample_method":"synthetic","synthetic_acceptance_length":2.8'
fi
SPEC_CONFIG=$(cat <<EOF
{"method":"mtp","num_speculative_tokens":$SPEC_TOKENS,$REJECT}
EOF
)

VLLM_CMD=(
    vllm serve "$MODEL_PATH"
    --served-model-name "$MODEL"
    --port "$PORT"
    --tensor-parallel-size "$TP"
    --max-num-seqs "$MAX_NUM_SEQS"
    --speculative-config "$SPEC_CONFIG"
    --compilation-config "{\"cudagraph_capture_sizes\":[$CAPTURE_LIST]}"
)
VLLM_CMD+=("${OFFLOAD_ARGS[@]}")
printf '%q ' "${VLLM_CMD[@]}" | tee "$RESULT_DIR/vllm_command.txt"
printf '\n' | tee -a "$RESULT_DIR/vllm_command.txt"

cleanup() { stop_background_process_tree "$SERVER_PID"; }
trap cleanup EXIT
set +x
"${VLLM_CMD[@]}" > "$SERVER_LOG" 2>&1 &
SERVER_PID=$!
wait_for_server_ready --port "$PORT"
if [ "$EVAL_ONLY" = "true" ]; then
    run_eval --port "$PORT"
else
    build_replay_cmd
    run_agentic_replay_and_write_outputs "$RESULT_DIR"
fi
