#!/usr/bin/env bash
# Acme-7B FP8 on H200: arguments built by a script-defined function (synthetic).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL MAX_MODEL_LEN

build_args() {
    local args="--tensor-parallel-size $TP"
    if [[ $ISL == 8* ]]; then
        args+=" --max-num-batched-tokens $(( ISL + 256 ))"
    fi
    echo "$args"
}

EXTRA_ARGS=$(build_args)
BLOCK=$(( CONC >= 32 ? 64 : 32 ))

set -x
vllm serve "$MODEL" --port "$PORT" $EXTRA_ARGS --block-size $BLOCK \
    --max-model-len "$MAX_MODEL_LEN" > server.log 2>&1 &
