#!/usr/bin/env bash
# The demo's report of each rank's plan (scripts/demo.sh --report), read from a real step's
# --stoker-verbose output. The fault: a tuned rank's other lines (the reasons that did not
# fit on its plan line, what planning cost) were printed as "untuned: ...".
#   demo_report.sh CLUSTER_DIR
set -uo pipefail
cluster=$1
src=$(cd "$(dirname "$0")/../.." && pwd -P)
[ -f "$cluster/skip-reason" ] && { echo "SKIP: $(cat "$cluster/skip-reason")"; exit 77; }
work=$(mktemp -d /var/tmp/stoker-demo-report.XXXXXX)  # the demo refuses /tmp (n2's is private)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/jobs"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

"$src/tests/cluster/with_cluster.sh" "$cluster" \
  srun -N2 -n4 --stoker --stoker-verbose true 2>"$work/jobs/on.err" >"$work/jobs/on.out"
report=$("$src/scripts/demo.sh" --report --dir "$work")
echo "$report"
check "a plan block for each of the 4 ranks" '[ "$(grep -cE "^  rank [0-3] \(node .*, local [01]/2\): cpus " <<<"$report")" = 4 ]'
check "what planning cost, under each rank" '[ "$(grep -c "^      cost: task_init took " <<<"$report")" = 4 ]'
check "no tuned rank said untuned" '! grep -q "untuned" <<<"$report"'
[ $fails = 0 ] || { cat "$work/jobs/on.err"; echo "$fails check(s) failed"; exit 1; }
