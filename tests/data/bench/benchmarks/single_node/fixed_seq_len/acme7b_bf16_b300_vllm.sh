#!/usr/bin/env bash
# Acme-7B BF16 on B300 through the OpenAI entrypoint module and a command-prefix array.
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP

PFX=()
[ "$TP" -ge 2 ] && PFX=(numactl --interleave=all)
SERVER_ARGS=(--model "$MODEL" --tensor-parallel-size "$TP" --port "$PORT" --dtype bfloat16)
"${PFX[@]}" python3 -m vllm.entrypoints.openai.api_server "${SERVER_ARGS[@]}" > server.log 2>&1 &
