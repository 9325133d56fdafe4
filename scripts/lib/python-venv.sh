# Sourced by scripts that run Python tools: a pinned set of PyPI packages in a virtualenv of its own.
#
# ensure_python_venv <folder> <requirement>...
#   Creates the virtualenv at <folder> with exactly these requirements (`name==version`) unless it already
#   has them (a stamp file records what was installed: a second call costs nothing). A virtualenv cannot
#   be moved (its scripts name their interpreter by path), so a failed install leaves no stamp and the
#   next call starts again. As root on Debian it installs python3-venv when missing.
#
# The caller defines log and fail.

ensure_python_venv() {
  local venv=$1
  shift
  local wanted="$*"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.requirements" 2>/dev/null)" = "$wanted" ]; then
    return 0
  fi
  command -v python3 >/dev/null || fail "python3 is needed (Debian: apt-get install python3)"
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    [ "$(id -u)" = 0 ] || fail "python3 with venv and ensurepip is needed (Debian: apt-get install python3-venv)"
    log "installing python3-venv"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  log "installing $wanted into $venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$@" \
    || fail "pip install $wanted failed (is PyPI reachable?)"
  echo "$wanted" > "$venv/.requirements.tmp" && mv -f "$venv/.requirements.tmp" "$venv/.requirements"
}
