#!/usr/bin/env bash
# reach.plugin_SUITE: the plugin's Debian package for the Slurm of the SUITE root, built by
# `scripts/package.sh --slurm-root` (plugin-only, bullseye sysroot), then checked against
# that root's own dpkg database: the version carries the Slurm release (0.1.0+sl2411), the
# Depends pin that release, and the root's installed Slurm and glibc satisfy every Depends.
#
#   tests/reach/plugin_package.sh SUITE BUILD_DIR OUT_DIR
#
# Exit status: 0 passed; 1 a check failed; 77 skipped (no root).
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 3 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
suite=$1 build=$2 out=$3
root_of "$suite"; root=$REPLY

log=$(mktemp)
if ! STOKER_JOBS=${STOKER_JOBS:-2} "$reach_src/scripts/package.sh" --slurm-root "$root" \
  --build "$build" --out "$out" >"$log" 2>&1; then
  echo "FAIL: scripts/package.sh --slurm-root $root:"; cat "$log"; rm -f "$log"; exit 1
fi
deb=$(tail -n 1 "$log"); rm -f "$log"
echo "built $deb"

# The root's Slurm: "24.11.5-1" -> release 24.11, tag sl2411.
admin=$root/var/lib/dpkg
slurm=$(dpkg-query --admindir="$admin" -W -f='${Version}' slurm-wlm-basic-plugins)
release=$(sed -E 's/^([0-9]+)\.([0-9]+).*/\1.\2/' <<<"$slurm")
tag=sl${release/./}
version=$(dpkg-deb --field "$deb" Version)
check "the version carries Slurm $release" "^[0-9.]+\+$tag\$" "$version"
check "the file name carries it" "_[0-9.]+\+${tag}_amd64\.deb\$" "$deb"
depends=$(dpkg-deb --field "$deb" Depends)
check "Depends pins Slurm $release" "slurm-wlm-basic-plugins \(>= $release\)" "$depends"
echo "Depends: $depends"

# Each Depends clause (no alternatives here) against the root's installed packages.
IFS=',' read -ra clauses <<<"$depends"
for clause in "${clauses[@]}"; do
  clause=${clause# }
  read -r pkg op ver <<<"$(sed -E 's/^ *([^ (]+) *(\(([<>=]+) *([^)]+)\))?.*/\1 \3 \4/' <<<"$clause")"
  have=$(dpkg-query --admindir="$admin" -W -f='${Version}' "$pkg" 2>/dev/null || true)
  if [ -z "$have" ]; then
    echo "FAIL $suite has no $pkg installed ($clause)"; failures=$((failures + 1))
  elif [ -z "$op" ] || dpkg --compare-versions "$have" "${op/>>/gt}" "$ver"; then
    echo "ok   $suite's $pkg $have satisfies '$clause'"
  else
    echo "FAIL $suite's $pkg $have does not satisfy '$clause'"; failures=$((failures + 1))
  fi
done
finish
