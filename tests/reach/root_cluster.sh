#!/usr/bin/env bash
# reach.cluster_SUITE: a one-node Slurm cluster made of the SUITE root's own slurmctld, slurmd
# and munged (loopback, in one bubblewrap sandbox with its own PID and host-name namespaces:
# everything ends with it) runs a two-task step with the plugin built for that release. Each
# task must run bound by the plugin where its plan says (Slurm binds nothing: --cpu-bind=none;
# the task's CPU affinity is STOKER_CPUS), the two tasks on disjoint CPUs, and carry the plan
# the flags asked for (STOKER_PROFILE=cv, STOKER_BIND=even, a whole number of workers, its
# local rank, STOKER_PLAN_VERSION=1).
#
#   tests/reach/root_cluster.sh SUITE PLUGINS_DIR WORK_DIR
#
# Ports 16440 (slurmctld) and 16441 (slurmd): outside the 17000-19997 of
# scripts/local-cluster.sh, so both clusters can run at once. No step of it waits on a clock:
# each start is awaited by asking the daemon (munge's socket, sinfo), with a generous bound.
# Exit 77 when the root or the package is missing, or the root has no slurmctld.
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 3 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
suite=$1 plugins=$2 work=$3
[ "$(id -u)" = 0 ] || skip "slurmd runs as root"
root_of "$suite"; root=$REPLY
[ -x "$root/usr/sbin/slurmctld" ] && [ -x "$root/usr/sbin/slurmd" ] && [ -x "$root/usr/sbin/munged" ] ||
  skip "the $suite root has no slurmctld, slurmd and munged (scripts/roots.sh packages $suite)"
rm -rf "$work" && mkdir -p "$work"/{state,spool,log} && chmod 700 "$work"
plugin_of "$plugins" "$suite" "$work"; plugin=$REPLY
cp "$plugin" "$work/spank_stoker.so"
cp "$reach_src/tests/cluster/probe.sh" "$work/probe.sh"
ncpu=$(nproc)
cat >"$work/slurm.conf" <<EOF
ClusterName=reach
SlurmctldHost=reach(127.0.0.1)
SlurmctldPort=16440
SlurmdPort=16441
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=/mnt/state
SlurmdSpoolDir=/mnt/spool
SlurmctldPidFile=/mnt/slurmctld.pid
SlurmdPidFile=/mnt/slurmd.pid
SlurmctldLogFile=/mnt/log/slurmctld.log
SlurmdLogFile=/mnt/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
PlugStackConfig=/mnt/plugstack.conf
NodeName=reach NodeAddr=127.0.0.1 CPUs=$ncpu CoresPerSocket=$ncpu ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=reach Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
echo "optional /mnt/spank_stoker.so" >"$work/plugstack.conf"
printf '127.0.0.1 localhost reach\n' >"$work/hosts"

# Inside the sandbox: munged (its key made here), slurmctld, slurmd, then the step.
cat >"$work/run.sh" <<'EOF'
#!/bin/sh
set -e
export SLURM_CONF=/mnt/slurm.conf
await() {  # await WHAT COMMAND...: until COMMAND succeeds, at most 120 tries a second apart
  what=$1 i=0
  shift
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 120 ] || { echo "never ready: $what"; cat /mnt/log/*.log; exit 1; }
    sleep 1
  done
}
mkdir -p /run/munge
mungekey -c -k /mnt/munge.key
munged --force --key-file=/mnt/munge.key --pid-file=/mnt/munged.pid \
  --log-file=/mnt/log/munged.log --seed-file=/mnt/munged.seed
await munge sh -c 'munge -n | unmunge'
slurmctld
slurmd
await sinfo sh -c 'sinfo -h -o %T | grep -qx idle'
echo "cluster: $(sinfo -h -o '%N %T %c')"
# Slurm binds nothing (--cpu-bind=none): each task's CPUs are what the plugin chose.
srun -n2 --cpu-bind=none --stoker=on --stoker-bind=even --stoker-profile=cv /mnt/probe.sh
# The control: a task holding every CPU of the node, without stoker, keeps them all.
srun -n1 -c "$(nproc)" --cpu-bind=none --stoker=off sh -c \
  'echo "control affinity=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'
EOF
chmod +x "$work/run.sh"
# /sys: hwloc reads the machine there (the plugin binds by it), slurmd its cgroups.
BWRAP_EXTRA=(--unshare-uts --hostname reach --ro-bind "$work/hosts" /etc/hosts --ro-bind /sys /sys
             --cap-add ALL)
rc=0
out=$(in_root "$root" "$work" timeout 300 /mnt/run.sh 2>&1) || rc=$?
[ $rc = 0 ] || { echo "$out"; echo "FAIL: the step did not run (exit $rc)"; tail -n 20 "$work"/log/*.log; exit 1; }
grep -E '^cluster:|^control|^[01] (affinity|STOKER_(CPUS|PROFILE|WORKERS|BIND|LOCAL_RANK))=' <<<"$out" | sort | sed 's/^/  /'

# Each rank's lines: "<rank> KEY=VALUE" (tests/cluster/probe.sh).
value() { sed -n "s/^$1 $2=//p" <<<"$out" | head -n 1; }
for r in 0 1; do
  affinity=$(value $r affinity) cpus=$(value $r STOKER_CPUS)
  check "rank $r has a plan" '^1$' "$(value $r STOKER_PLAN_VERSION)"
  check "rank $r: the profile asked for" '^cv$' "$(value $r STOKER_PROFILE)"
  check "rank $r: a whole number of workers" '^[1-9][0-9]*$' "$(value $r STOKER_WORKERS)"
  check "rank $r: the binding asked for" '^even$' "$(value $r STOKER_BIND)"
  check "rank $r: its local rank of 2" "^$r/2\$" "$(value $r STOKER_LOCAL_RANK)/$(value $r STOKER_LOCAL_SIZE)"
  check "rank $r runs where its plan says (affinity $affinity, STOKER_CPUS $cpus)" \
    "^${cpus:-none}\$" "$affinity"
done
all=$(value control affinity)
check "without stoker a task keeps the node's CPUs ($all)" "^$(cpulist "0-$((ncpu - 1))" | paste -sd,)\$" \
  "$(cpulist "$all" | paste -sd,)"
a0=$(value 0 affinity) a1=$(value 1 affinity)
if [ -n "$a0" ] && [ -n "$a1" ] && [ -z "$(comm -12 <(cpulist "$a0") <(cpulist "$a1"))" ]; then
  echo "ok   the two ranks are bound to disjoint CPUs ($a0 | $a1)"
else
  echo "FAIL the two ranks share CPUs ($a0 | $a1)"; failures=$((failures + 1))
fi
finish
