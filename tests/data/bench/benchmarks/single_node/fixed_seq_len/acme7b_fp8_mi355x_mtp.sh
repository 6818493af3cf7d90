#!/usr/bin/env bash
# Acme-7B FP8 with MTP on MI355X; the launcher finds it under the untagged name (synthetic).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC

NUM_SPEC=${NUM_SPEC_TOKENS:-3}
SPEC_JSON="{\"method\":\"mtp\",\"num_speculative_tokens\":$NUM_SPEC}"
MODEL_NAME=${MODEL#*/}
GMU=$(printf '%.2f' 0.9)
PFX=()
if [[ "$EP_SIZE" -gt 1 ]]; then
    PFX=(env VLLM_ALL2ALL_BACKEND=allgather_reducescatter)
fi
CFG=/tmp/${MODEL_NAME,,}-server.yaml
cat > "$CFG" <<-YAML
	max-num-seqs: $CONC
	served-model-name: $MODEL_NAME
	YAML

set -x
VLLM_USE_TRITON_FLASH_ATTN=0 "${PFX[@]}" vllm serve "$MODEL" \
    --config "$CFG" \
    --tensor-parallel-size=$TP \
    --gpu-memory-utilization "$GMU" \
    --speculative-config "$SPEC_JSON" \
    > server.log 2>&1 &
