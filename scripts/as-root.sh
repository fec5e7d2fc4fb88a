# Sourced by the scripts that need root (test.sh, demo.sh, install-deps.sh), before they
# change folder:
#   . "$(dirname "$0")/as-root.sh" && as_root NAME WHY "$@"
# As root it returns at once. Otherwise it runs the calling script again under sudo when
# sudo is installed (keeping the STOKER_* and CI settings), and without sudo it says how to
# run it as root and exits 1. So the README's commands work as root on a bare Debian (no
# sudo there) and for a sudoer alike.
# shellcheck shell=bash
as_root() {
  local name=$1 why=$2 keep
  shift 2
  [ "$(id -u)" = 0 ] && return 0
  if command -v sudo >/dev/null 2>&1; then
    keep=$(compgen -e | grep -E '^(STOKER_|CI$)' | paste -sd, - || true)
    echo "$name: $why: running it with sudo" >&2
    exec sudo ${keep:+"--preserve-env=$keep"} -- "$(realpath "$0")" "$@"
  fi
  echo "$name: $why, and sudo is not installed here: run it as root (su -c '$0${*:+ $*}')" >&2
  exit 1
}
