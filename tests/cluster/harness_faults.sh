#!/usr/bin/env bash
# Faults of the cluster harness itself: what one test leaves broken must not fail the tests
# after it. with_cluster.sh (and the gtest harness) run `scripts/local-cluster.sh clear`
# before each test, which
#   leftover-job  cancels a job an earlier test left: a test's srun killed by a timeout kept
#                 its job holding both nodes, and every later cluster test queued behind it
#                 until it timed out too;
#   dead-daemon   starts a daemon that is gone again, naming it: Slurm 22.05's slurmd
#                 aborted once on heap corruption while two steps of one job launched at
#                 once, and every later test failed on a node that never came back.
#   harness_faults.sh CLUSTER_DIR leftover-job|dead-daemon
set -uo pipefail
cluster=$1
here=$(dirname "$0")
[ -f "$cluster/skip-reason" ] && { echo "SKIP: $(cat "$cluster/skip-reason")"; exit 77; }
export PATH=/usr/sbin:/sbin:$PATH SLURM_CONF=$cluster/slurm.conf
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
# next_test CMD: runs CMD as the next cluster test would, through with_cluster.sh (which
# clears the cluster first); its output in $out, its stderr in $err, its start in $t0.
next_test() {
  t0=$(date +%s)
  out=$("$here/with_cluster.sh" "$cluster" sh -c "$1" 2>"$err")
}

leftover_job() {
  local job
  err=$cluster/jobs/leftover.err
  job=$(sbatch --parsable -N2 --exclusive -o /dev/null --wrap 'sleep 600') || exit 1
  for _ in $(seq 1 40); do
    [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] && break
    sleep 0.5
  done
  check "the left-behind job holds both nodes" '[ "$(squeue -h -j "$job" -o %T)" = RUNNING ]'
  next_test 'squeue -h | wc -l; timeout 30 srun -N2 true && echo ran'
  check "the next test finds no job on the cluster" '[ "$(head -1 <<<"$out")" = 0 ]'
  check "and its srun runs at once" '[ "$(tail -1 <<<"$out")" = ran ] && [ $(($(date +%s) - t0)) -lt 40 ]'
  check "the cancelled job is named" 'grep -q "cancelling jobs left by an earlier run: $job" "$err"'
  scancel "$job" 2>/dev/null
}

dead_daemon() {
  local pid
  err=$cluster/jobs/dead-daemon.err
  pid=$(tr -dc '0-9' <"$cluster/run/slurmd-n2.pid")
  kill -KILL "$pid"
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  check "n2's slurmd is gone" '! kill -0 "$pid" 2>/dev/null'
  next_test 'timeout 30 srun -N2 true && echo ran'
  check "the next test's two-node srun runs" '[ "$(tail -1 <<<"$out")" = ran ] && [ $(($(date +%s) - t0)) -lt 60 ]'
  check "the dead daemon is named" 'grep -q "gone: slurmd-n2" "$err"'
  check "n2 has a slurmd again" 'kill -0 "$(tr -dc 0-9 <"$cluster/run/slurmd-n2.pid")" 2>/dev/null'
}

mkdir -p "$cluster/jobs"
case ${2:-} in
  leftover-job) leftover_job ;;
  dead-daemon) dead_daemon ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
[ $fails = 0 ] || { cat "$err"; echo "$fails check(s) failed"; exit 1; }
