#!/usr/bin/env bash
# Fault: a test's srun is killed by a timeout and its job stays on the cluster, holding
# both nodes. The next test must not queue behind it until it times out too (one hung
# job used to fail every later cluster test): with_cluster.sh (and the gtest harness)
# cancel what earlier tests left before running theirs.
#   leftover_job.sh CLUSTER_DIR
set -uo pipefail
cluster=$1
here=$(dirname "$0")
[ -f "$cluster/skip-reason" ] && { echo "SKIP: $(cat "$cluster/skip-reason")"; exit 77; }
export PATH=/usr/sbin:/sbin:$PATH SLURM_CONF=$cluster/slurm.conf
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

job=$(sbatch --parsable -N2 --exclusive -o /dev/null --wrap 'sleep 600') || exit 1
for _ in $(seq 1 40); do
  [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] && break
  sleep 0.5
done
check "the left-behind job holds both nodes" '[ "$(squeue -h -j "$job" -o %T)" = RUNNING ]'
t0=$(date +%s)
out=$("$here/with_cluster.sh" "$cluster" sh -c 'squeue -h | wc -l; timeout 30 srun -N2 true && echo ran' 2>"$cluster/jobs/leftover.err")
check "the next test finds no job on the cluster" '[ "$(head -1 <<<"$out")" = 0 ]'
check "and its srun runs at once" '[ "$(tail -1 <<<"$out")" = ran ] && [ $(($(date +%s) - t0)) -lt 40 ]'
check "the cancelled job is named" 'grep -q "cancelling jobs left by an earlier run: $job" "$cluster/jobs/leftover.err"'
scancel "$job" 2>/dev/null
[ $fails = 0 ] || { cat "$cluster/jobs/leftover.err"; echo "$fails check(s) failed"; exit 1; }
