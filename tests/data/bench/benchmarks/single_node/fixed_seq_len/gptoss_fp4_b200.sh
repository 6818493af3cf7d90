#!/usr/bin/env bash
# gpt-oss on B200: the DGXC launcher points MODEL at a pre-staged directory (synthetic).
source "$(dirname "$0")/../../benchmark_lib.sh"
check_env_vars MODEL TP CONC ISL OSL

cat > config.yaml << EOF
compilation-config: '{"pass_config":{"fuse_allreduce_rms":true}}'
async-scheduling: true
EOF

if [[ "$MODEL" == /* ]]; then SERVED=(--served-model-name "$MODEL"); else SERVED=(); fi

set -x
vllm serve $MODEL --host 0.0.0.0 --port=$PORT --config config.yaml \
  --gpu-memory-utilization=0.9 --tensor-parallel-size=$TP --max-num-seqs=$CONC \
  "${SERVED[@]}" --max-cudagraph-capture-size 2048 > server.log 2>&1 &
