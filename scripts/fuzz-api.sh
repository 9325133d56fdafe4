#!/usr/bin/env bash
# Fuzzes the live API with schemathesis over every operation of the OpenAPI document it serves
# (docs/fuzzing.md says what and why). Starts the platform the way `npm start` does (embedded PGlite,
# a Temporal dev server) in a scratch directory, creates a few fixtures so operations with ids have
# something real to hit, runs `schemathesis run .../openapi.json` with every check (scripts/fuzz-api.toml),
# and stops the platform.
# Exits non-zero on any failed check (a 5xx, an undocumented status, a body that breaks its schema...).
#
# Needs a build (`npm run build`; FUZZ_BUILD=1 builds first). Settings (environment):
#   FUZZ_MAX_EXAMPLES  test cases per operation and phase (default 25; docs/fuzzing.md says why)
#   FUZZ_SEED          schemathesis' random seed, to replay a failing run (default: a new one, printed)
#   FUZZ_REPORT_DIR    where the JUnit report and the cassette of failing requests go (default: a temp dir)
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD

schemathesis_version=4.32.5
cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform"
venv="$cache_dir/schemathesis-$schemathesis_version"
max_examples="${FUZZ_MAX_EXAMPLES:-25}"

work_dir=""
platform_pid=""
log_file=""

log() { echo "[fuzz] $*" >&2; }
fail() { echo "[fuzz] FAILED: $*" >&2; exit 1; }
source "$root/scripts/lib/python-venv.sh"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$platform_pid" ]; then
    kill -INT -- "-$platform_pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 30; i++)); do
      kill -0 -- "-$platform_pid" 2>/dev/null || break
      sleep 1
    done
    kill -KILL -- "-$platform_pid" 2>/dev/null || true
    if [ "$rc" != 0 ] && [ -f "$log_file" ]; then
      echo "[fuzz] platform log (last 100 lines):" >&2
      tail -n 100 "$log_file" >&2 || true
    fi
  fi
  if [ -n "$work_dir" ]; then rm -rf "$work_dir"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# schemathesis, pinned, in its own virtualenv; a second call only checks the stamp.
install_schemathesis() {
  ensure_python_venv "$venv" "schemathesis==$schemathesis_version"
}

free_port() {
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

start_platform() {
  local port=$1 temporal_port ui_port
  temporal_port=$(free_port 27233)
  ui_port=$(free_port $((temporal_port + 1000)))
  log_file="$work_dir/platform.log"
  # setsid: the platform and its Temporal dev server form one process group, stopped together.
  setsid env -u DATABASE_URL -u TEMPORAL_ADDRESS \
    PORT="$port" DATA_DIR="$work_dir/data" INIT_API_KEY="$api_key" \
    TEMPORAL_DEV_PORT="$temporal_port" TEMPORAL_DEV_UI_PORT="$ui_port" \
    node dist/workers/dev.js >"$log_file" 2>&1 </dev/null &
  platform_pid=$!
  local i
  for ((i = 0; i < 180; i++)); do
    if curl -fs -o /dev/null "http://127.0.0.1:$port/readyz"; then return 0; fi
    kill -0 "$platform_pid" 2>/dev/null || fail "the platform exited before /readyz answered"
    sleep 1
  done
  fail "/readyz did not answer within 180 s"
}

# POSTs JSON $2 to path $1 and fails unless the answer is 2xx.
api_post() {
  curl -fsS -o /dev/null -H "Authorization: Bearer $api_key" -H 'content-type: application/json' \
    -d "$2" "$base_url$1" || fail "fixture POST $1 failed"
}

# Records for the operations that address one by name, so not every case is a 404. The names are what
# the fuzzer meets again through its own POSTs and the response examples it reuses.
create_fixtures() {
  api_post /v1/agents '{"name": "fuzz", "description": "fuzzing fixture"}'
  api_post /v1/agents/fuzz/versions '{"graph": {"nodes": [{"id": "main", "model": "scripted", "toolRefs": [], "script": [{"text": "ok"}]}]}}'
  api_post /v1/prompts '{"name": "fuzz", "template": "Hello {{name}}"}'
  api_post /v1/knowledge '{"name": "fuzz"}'
  api_post /v1/memory '{"content": "the fuzzer was here"}'
  api_post /v1/evals/suites '{"agent": "fuzz", "name": "fuzz", "scorers": [{"type": "contains"}]}'
  # The one key revokeApiKey may revoke (scripts/fuzz-api.toml).
  FUZZ_DECOY_KEY_ID=$(curl -fsS -H "Authorization: Bearer $api_key" -H 'content-type: application/json' \
    -d '{"kind": "management", "name": "fuzz decoy"}' "$base_url/v1/api-keys" \
    | node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(0, "utf8")).api_key.id)') \
    || fail "fixture POST /v1/api-keys failed"
  export FUZZ_DECOY_KEY_ID
}

main() {
  install_schemathesis
  if [ "${FUZZ_BUILD:-0}" = 1 ]; then npm run build >&2; fi
  [ -f dist/workers/dev.js ] || fail "no build: run npm run build (or FUZZ_BUILD=1)"
  bash scripts/fetch-embedder-model.sh >/dev/null

  work_dir=$(mktemp -d /tmp/agent-platform-fuzz.XXXXXX)
  api_key="svc_sk_$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 40)"
  local port
  port=$(free_port 28080)
  base_url="http://127.0.0.1:$port"
  start_platform "$port"
  log "platform ready on $base_url"
  create_fixtures

  local report_dir="${FUZZ_REPORT_DIR:-$work_dir/report}"
  local seed_args=()
  if [ -n "${FUZZ_SEED:-}" ]; then seed_args=(--seed "$FUZZ_SEED"); fi
  local started=$SECONDS rc=0
  "$venv/bin/schemathesis" --config-file "$root/scripts/fuzz-api.toml" run "$base_url/openapi.json" \
    --max-examples "$max_examples" "${seed_args[@]}" \
    --header "Authorization: Bearer $api_key" \
    --report junit,vcr --report-dir "$report_dir" \
    --no-color || rc=$?
  log "schemathesis finished in $((SECONDS - started)) s with status $rc"
  if [ "$rc" != 0 ] && [ -z "${FUZZ_REPORT_DIR:-}" ]; then
    # The scratch directory goes away on exit; keep the failing requests.
    cp -r "$report_dir" "/tmp/fuzz-report-$$" && log "report kept in /tmp/fuzz-report-$$"
  fi
  return "$rc"
}

main "$@"
