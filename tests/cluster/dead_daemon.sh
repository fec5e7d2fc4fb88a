#!/usr/bin/env bash
# Fault: a daemon of the local cluster dies during a test (Slurm 22.05's slurmd aborted
# once on heap corruption while two steps of one job launched at once). The test then
# running fails; the next one must not fail too on a node that never comes back:
# with_cluster.sh (and the gtest harness) start a daemon that is gone again, naming it.
#   dead_daemon.sh CLUSTER_DIR
set -uo pipefail
cluster=$1
here=$(dirname "$0")
[ -f "$cluster/skip-reason" ] && { echo "SKIP: $(cat "$cluster/skip-reason")"; exit 77; }
export PATH=/usr/sbin:/sbin:$PATH SLURM_CONF=$cluster/slurm.conf
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

pid=$(tr -dc '0-9' <"$cluster/run/slurmd-n2.pid")
kill -KILL "$pid"
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
check "n2's slurmd is gone" '! kill -0 "$pid" 2>/dev/null'
t0=$(date +%s)
out=$("$here/with_cluster.sh" "$cluster" sh -c 'timeout 30 srun -N2 true && echo ran' 2>"$cluster/jobs/dead-daemon.err")
check "the next test's two-node srun runs" '[ "$(tail -1 <<<"$out")" = ran ] && [ $(($(date +%s) - t0)) -lt 60 ]'
check "the dead daemon is named" 'grep -q "gone: slurmd-n2" "$cluster/jobs/dead-daemon.err"'
check "n2 has a slurmd again" 'kill -0 "$(tr -dc 0-9 <"$cluster/run/slurmd-n2.pid")" 2>/dev/null'
[ $fails = 0 ] || { cat "$cluster/jobs/dead-daemon.err"; echo "$fails check(s) failed"; exit 1; }
