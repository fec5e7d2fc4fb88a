#!/usr/bin/env bash
# Runs lintian on the three .debs that scripts/package.sh made; fails on any error tag and
# prints every tag (warnings and infos included, so they are seen).
#
#   tests/package/lint.sh DEBS_DIR
#
# Exit status: 0 no error tag; 1 errors (or a .deb missing); 77 skipped (no lintian here).
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
debs=$1
command -v lintian >/dev/null || { echo "SKIP: lintian is not installed (scripts/install-deps.sh)"; exit 77; }
files=()
for name in stoker-slurm-plugin stoker python3-stoker; do
  f=$(ls "$debs/${name}"_*.deb 2>/dev/null | head -n 1)
  [ -n "$f" ] || { echo "FAIL: no ${name}_*.deb in $debs"; exit 1; }
  files+=("$f")
done
status=0
# -I: the I: tags too, so they are seen. Root is fine for a lint (lintian only warns).
out=$(lintian --display-info --fail-on error "${files[@]}" 2>&1) || status=$?
grep -v '^running with root privileges' <<<"$out" || true
[ "$status" = 0 ] || { echo "FAIL: lintian found errors (exit $status)"; exit 1; }
echo "ok: lintian found no error in ${files[*]##*/}"
