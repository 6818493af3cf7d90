#!/usr/bin/env bash
# Acme-7B FP8 on MI300X: the launcher's port comes from the Slurm job id (synthetic).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC

SIZES=()
size=1
while (( size <= CONC * 2 )); do
    SIZES+=("$size")
    size=$(( size * 2 ))
done
CAPTURE=$(IFS=,; echo "${SIZES[*]}")
MAX_SEQS=$(( CONC > 64 ? CONC : 64 ))

vllm serve "$MODEL" --port "$PORT" --tensor-parallel-size "$TP" \
    --cuda-graph-sizes "$CAPTURE" --max-num-seqs $MAX_SEQS > server.log 2>&1 &
