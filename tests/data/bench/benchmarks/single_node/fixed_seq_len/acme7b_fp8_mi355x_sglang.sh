#!/usr/bin/env bash
# Acme-7B on SGLang: no vLLM server in here (synthetic).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC
python3 -m sglang.launch_server --model-path "$MODEL" --tp "$TP" --port "$PORT" > server.log 2>&1 &
wait_for_server_ready --port "$PORT"
