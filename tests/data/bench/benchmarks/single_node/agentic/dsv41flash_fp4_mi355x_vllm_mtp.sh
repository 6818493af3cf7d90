#!/usr/bin/env bash
# DeepSeek-V4.1-Flash on MI355X with DSpark drafts (synthetic recipe shaped like the seed).
set -eo pipefail
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC KV_OFFLOADING RESULT_DIR
require_agentic_kv_offload_none

hf download "$MODEL"
MODEL_PATH="${MODEL_PATH:-$MODEL}"

export VLLM_ENGINE_READY_TIMEOUT_S=3600
export VLLM_ROCM_USE_AITER=1
export VLLM_ROCM_USE_AITER_MOE=1
export AITER_TRITON_LOG_LEVEL=ERROR
export VLLM_USE_BREAKABLE_CUDAGRAPH=1
export VLLM_USE_RUST_FRONTEND=1

# Scheduler capacity pinned to what the verified run used.
MAX_NUM_SEQS=128
DRAFT_TOKENS=5
CAPTURE=1
while (( CAPTURE < MAX_NUM_SEQS * (DRAFT_TOKENS + 1) && CAPTURE < 2048 )); do
    CAPTURE=$(( CAPTURE * 2 ))
done

# Accuracy evals keep real block rejection; throughput arms fix the acceptance length.
if [[ "${EVAL_ONLY:-false}" == true ]]; then
    REJECTION='"rejection_sample_method":"block"'
else
    REJECTION='"rejection_sample_method":"synthetic","synthetic_acceptance_length":3.51'
fi
SPEC_CONFIG=$(cat <<JSON
{"method":"dspark","num_speculative_tokens":$DRAFT_TOKENS,"draft_sample_method":"probabilistic",$REJECTION,"enable_adaptive_verification":false}
JSON
)

PARSER=deepseek_v41
SERVE=(vllm serve "$MODEL_PATH" --served-model-name "$MODEL")
SERVE+=(--host 0.0.0.0 --port "$PORT" --tensor-parallel-size "$TP")
SERVE+=(--language-model-only --tokenizer-mode "$PARSER")
SERVE+=(--tool-call-parser "$PARSER" --enable-auto-tool-choice --reasoning-parser "$PARSER")
SERVE+=(--moe-backend aiter --gpu-memory-utilization 0.9)
SERVE+=(--speculative-config "$SPEC_CONFIG")
SERVE+=(--max-model-len 1048576 --max-num-seqs "$MAX_NUM_SEQS")
SERVE+=(--max-cudagraph-capture-size "$CAPTURE" --max-num-batched-tokens 16384)

printf '%q ' "${SERVE[@]}" | tee "$RESULT_DIR/vllm_command.txt"
"${SERVE[@]}" > "$RESULT_DIR/server.log" 2>&1 &
SERVER_PID=$!
wait_for_server_ready --port "$PORT"
