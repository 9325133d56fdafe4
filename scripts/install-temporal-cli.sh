#!/usr/bin/env bash
# Builds the Temporal CLI v1.5.1 into ~/.cache/agent-platform/bin with `go install` (later versions
# cannot be go-installed), unless one is already found: TEMPORAL_CLI_PATH, `temporal` on PATH, or that
# folder. About 4 minutes on two cores the first time (modules and compilation); idempotent.
set -euo pipefail

cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/agent-platform"

if [ -n "${TEMPORAL_CLI_PATH:-}" ] && [ -x "$TEMPORAL_CLI_PATH" ]; then exit 0; fi
if command -v temporal >/dev/null; then exit 0; fi
if [ -x "$cache_dir/bin/temporal" ]; then exit 0; fi
echo "[install] building the Temporal CLI v1.5.1 with go install (a few minutes the first time)" >&2
mkdir -p "$cache_dir/bin"
GOBIN="$cache_dir/bin" go install github.com/temporalio/cli/cmd/temporal@v1.5.1 >&2
