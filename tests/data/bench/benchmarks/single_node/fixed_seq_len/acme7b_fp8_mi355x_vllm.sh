#!/usr/bin/env bash
# Acme-7B FP8 on MI355X with vLLM (synthetic recipe for the extraction tests).
set -eo pipefail

source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars \
    MODEL \
    TP \
    CONC \
    ISL \
    OSL \
    MAX_MODEL_LEN \
    RESULT_FILENAME

if [[ -n "$SLURM_JOB_ID" ]]; then
    echo "JOB $SLURM_JOB_ID on $SLURMD_NODENAME"
fi

if [[ "$MODEL" != /* ]]; then hf download "$MODEL"; fi

SERVER_LOG=/workspace/server.log
export VLLM_ROCM_USE_AITER=1
export VLLM_ENGINE_READY_TIMEOUT_S=1800

# DP attention: one attention replica per GPU, experts sharded across them.
if [ "$DP_ATTENTION" = "true" ]; then
    if (( CONC < 2 * TP )); then
        echo "DP attention needs two sequences per rank (CONC=$CONC, TP=$TP)" >&2
        exit 1
    fi
    PARALLEL_ARGS="--data-parallel-size $TP --enable-expert-parallel"
else
    PARALLEL_ARGS="--tensor-parallel-size $TP"
fi

MAX_NUM_SEQS=$(( CONC * 2 ))
CONTEXT_LEN="$MAX_MODEL_LEN"
if [ "${EVAL_ONLY}" = "true" ]; then
    setup_eval_context
    CONTEXT_LEN="$EVAL_MAX_MODEL_LEN"
fi

if [ "$ISL" -eq 8192 ]; then
    BATCHED_TOKENS=$ISL
else
    BATCHED_TOKENS=4096
fi

start_gpu_monitor

set -x
vllm serve $MODEL --host 0.0.0.0 --port $PORT \
    $PARALLEL_ARGS \
    --max-num-seqs "$MAX_NUM_SEQS" \
    --max-model-len $CONTEXT_LEN \
    --max-num-batched-tokens "$BATCHED_TOKENS" \
    --kv-cache-dtype fp8 \
    --compilation-config '{"cudagraph_mode":"FULL_AND_PIECEWISE"}' \
    --no-enable-prefix-caching > "$SERVER_LOG" 2>&1 &

SERVER_PID=$!
wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"
run_benchmark_serving --model "$MODEL" --port "$PORT" --num-prompts "$((CONC * 10))"
