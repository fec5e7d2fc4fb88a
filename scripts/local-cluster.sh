#!/usr/bin/env bash
# A real two-node Slurm cluster on this machine, for stoker's tests and demo.
#
#   scripts/local-cluster.sh start  DIR [--plugin PATH] [--plugin-args "k=v ..."] [--watch PID]
#                                       [--watch-parent] [--skip-if-unable] [--pyxis]
#                                       [--mpi-default none|pmix]
#   scripts/local-cluster.sh stop   DIR
#   scripts/local-cluster.sh status DIR
#   scripts/local-cluster.sh env    DIR      # prints `export SLURM_CONF=...` for a shell
#   scripts/local-cluster.sh clear  DIR      # restarts a dead daemon, cancels every job, waits for idle nodes
#   scripts/local-cluster.sh mpi-default DIR none|pmix   # MpiDefault of the running cluster
#
# Everything lives in DIR (config, state, spool, logs, pid files): the script writes
# its own slurm.conf there and never reads or writes /etc/slurm. It refuses a DIR
# holding a Slurm config it did not write. Nodes n1 and n2 are two slurmd on this
# host with their own ports; n2 runs in its own mount namespace with a private /tmp
# (two stepds sharing /tmp break --mpi=pmix); the cluster folder, the plugin and this
# checkout are bound back into it when they live under /tmp.
# Fake GPUs: gres File= two existing character devices (Slurm only needs them to exist).
# --plugin writes DIR/plugstack.conf.d/stoker.conf loading that SPANK plugin; the
# file is re-read at each launch, so it can be rewritten while the cluster runs.
# --watch PID stops the cluster when process PID ends (a ctest run interrupted);
# --watch-parent watches the caller (ctest). --skip-if-unable: when this machine
# cannot run the cluster (not root, no Slurm), write the reason to DIR/skip-reason
# and exit 0, so tests skip with it instead of failing. --pyxis also loads NVIDIA pyxis
# (scripts/containers.sh install) for `srun --container-image`, in DIR/plugstack.conf.d/pyxis.conf.
# --mpi-default pmix (or `mpi-default DIR pmix` on a running cluster) gives every step
# PMIx, as a site's MpiDefault=pmix does: each task then has PMIX_RANK without asking for MPI
# (Debian's Slurm 22.05 with libpmix2). The default stays none.
# Ports: STOKER_CLUSTER_PORT for slurmctld, +1 and +2 for the nodes; by default one
# in 17000-19997 derived from DIR, so clusters in different folders can run together.
# Needs root (slurmd) and munge; munged is started only when not already running,
# and then stopped by the `stop` of the last cluster of this script that uses it
# (/run/munge/stoker-clusters lists them); a munged it did not start is left alone.
set -euo pipefail
export PATH=/usr/sbin:/sbin:$PATH  # slurmctld, slurmd, munged live in sbin

marker_name=.stoker-local-cluster
die() { echo "local-cluster: $*" >&2; exit 1; }

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

[ $# -ge 2 ] || usage
cmd=$1 dir_arg=$2
shift 2

# The folder, absolute; never a system Slurm folder (checked before creating it).
dir=$(realpath -m "$dir_arg")
case "$dir/" in
  /etc/*|/usr/*|/var/spool/slurm*|/) die "refusing $dir: use a folder of your own, not a system one" ;;
esac
mkdir -p "$dir" 2>/dev/null || die "cannot create $dir"
conf=$dir/slurm.conf
export SLURM_CONF=$conf

owned() { [ -f "$dir/$marker_name" ]; }
check_owned() {
  if [ -e "$conf" ] && ! owned; then
    die "$conf was not written by this script ($dir/$marker_name missing); refusing to touch it"
  fi
}

pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
read_pid() { [ -f "$1" ] && tr -dc '0-9' <"$1" || true; }

# Picks two existing character devices as fake GPU device files.
fake_gpu_files() {
  local found=() d
  for d in /dev/tty1 /dev/tty2 /dev/tty3 /dev/tty4 /dev/null /dev/zero /dev/full /dev/urandom; do
    [ -c "$d" ] && found+=("$d")
    [ ${#found[@]} -eq 2 ] && break
  done
  [ ${#found[@]} -eq 2 ] || die "no two character devices found for the fake GPUs"
  echo "${found[0]} ${found[1]}"
}

write_config() {
  local host ncpu port gpus g1 g2
  host=$(hostname -s)
  ncpu=$(nproc)
  port=${STOKER_CLUSTER_PORT:-$((17000 + 3 * ($(cksum <<<"$dir" | cut -d' ' -f1) % 1000)))}
  read -r g1 g2 <<<"$(fake_gpu_files)"
  mkdir -p "$dir"/{state,log,run,spool/n1,spool/n2,n2-tmp,plugstack.conf.d}
  chmod 1777 "$dir/n2-tmp"
  echo "written by scripts/local-cluster.sh; safe to delete with the folder" >"$dir/$marker_name"
  cat >"$conf" <<EOF
# Written by scripts/local-cluster.sh for a local two-node test cluster.
ClusterName=stoker-local
SlurmctldHost=$host
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=$mpi_default
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmdSpoolDir=$dir/spool/%n
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
# Job ids apart from other local clusters', so their stepds' /tmp/spmix_* names differ.
FirstJobId=$(( (port - 16999) * 1000 ))
InactiveLimit=0
KillWait=5
PlugStackConfig=$dir/plugstack.conf
GresTypes=gpu
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 1)) CPUs=$ncpu Sockets=1 CoresPerSocket=$ncpu ThreadsPerCore=1 RealMemory=4000 Gres=gpu:2
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 2)) CPUs=$ncpu Sockets=1 CoresPerSocket=$ncpu ThreadsPerCore=1 RealMemory=4000 Gres=gpu:2
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
  cat >"$dir/gres.conf" <<EOF
# Fake GPUs: Slurm only needs the device files to exist.
NodeName=n[1-2] Name=gpu File=$g1
NodeName=n[1-2] Name=gpu File=$g2
EOF
  echo "include $dir/plugstack.conf.d/*.conf" >"$dir/plugstack.conf"
}

write_plugin_conf() {
  local plugin=$1 args=$2
  [ -f "$plugin" ] || die "--plugin $plugin: no such file"
  echo "optional $plugin $args" >"$dir/plugstack.conf.d/stoker.conf"
}

munge_works() { command -v munge >/dev/null && munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

munge_users=/run/munge/stoker-clusters
munge_ours=/run/munge/stoker-munged.pid  # present when this script started munged

start_munge() {
  if munge_works; then
    echo "$dir" >>"$munge_users"
    return 0
  fi
  [ -f /etc/munge/munge.key ] || /usr/sbin/mungekey -c >/dev/null
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  chmod 0755 /run/munge
  su -s /bin/sh munge -c /usr/sbin/munged
  local i
  for i in $(seq 50); do munge_works && break; sleep 0.1; done
  munge_works || die "munged did not start (see /var/log/munge/munged.log)"
  read_pid /run/munge/munged.pid >"$munge_ours"
  echo "$dir" >>"$munge_users"
}

nodes_idle() {
  local states
  states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u) || return 1
  [ "$(grep -cE '^n[12] idle' <<<"$states")" = 2 ]
}

show_logs() {
  local f
  for f in "$dir"/log/*.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
  done >&2
}

start() {
  local plugin="" args="" watch="" skip=0 unable="" b pyxis=0
  mpi_default=none
  while [ $# -gt 0 ]; do
    case $1 in
      --mpi-default) mpi_default=$2; shift 2 ;;
      --plugin) plugin=$2; shift 2 ;;
      --plugin-args) args=$2; shift 2 ;;
      --watch) watch=$2; shift 2 ;;
      --watch-parent) watch=$PPID; shift ;;
      --skip-if-unable) skip=1; shift ;;
      --pyxis) pyxis=1; shift ;;
      *) die "start: unknown option $1" ;;
    esac
  done
  check_owned
  rm -f "$dir/skip-reason"
  [ "$(id -u)" = 0 ] || unable="the local Slurm cluster needs root (slurmd runs jobs as their users)"
  for b in slurmctld slurmd sinfo munged unshare; do
    command -v "$b" >/dev/null || unable="$b not found: run scripts/install-deps.sh"
  done
  if [ -n "$unable" ]; then
    [ $skip = 1 ] || die "$unable"
    echo "$unable" >"$dir/skip-reason"
    echo "local-cluster: not started: $unable"
    return 0
  fi
  if owned && pid_alive "$(read_pid "$dir/run/slurmctld.pid")"; then
    # Our own cluster left over from an interrupted run: replace it.
    echo "local-cluster: stopping the cluster already running in $dir"
    stop >/dev/null
  fi
  # Stop whatever was started so far when anything below fails or we are interrupted.
  trap 'echo "local-cluster: start failed; stopping what was started" >&2; show_logs; stop; exit 1' ERR
  trap 'stop; exit 130' INT TERM
  write_config
  [ -n "$plugin" ] && write_plugin_conf "$plugin" "$args"
  # pyxis only when asked: not a line left by an interrupted container test either.
  rm -f "$dir/plugstack.conf.d/pyxis.conf"
  [ $pyxis = 0 ] || "$(dirname "$0")/containers.sh" plugstack "$dir"
  rm -rf "${dir:?}"/state/* "$dir"/log/*.log
  start_munge
  slurmctld -c
  slurmd -N n1
  start_n2
  local i
  for i in $(seq 100); do nodes_idle && break; sleep 0.3; done
  nodes_idle || { echo "local-cluster: nodes did not become idle:" >&2; sinfo -N >&2 || true; false; }
  if [ -n "$watch" ]; then
    setsid "$0" _watch "$dir" "$watch" </dev/null >/dev/null 2>&1 &
    echo $! >"$dir/run/watch.pid"
  fi
  trap - ERR INT TERM
  echo "local-cluster: n1 n2 idle; export SLURM_CONF=$conf"
}

# Starts node n2 in its own mount namespace with a private /tmp (two stepds of one
# step sharing /tmp collide on --mpi=pmix's /tmp/spmix_appdir_* folders). What the jobs
# need and lives under the real /tmp (a clone in /tmp: the cluster folder, the plugin,
# this checkout) is bound back in at the same path, so n2 sees it too.
start_n2() {
  local repo shared=() p
  repo=$(cd "$(dirname "$0")/.." && pwd -P)
  for p in "$dir" "$repo" "$(dirname "$(realpath -m "${plugin:-/}")")"; do
    case "$p/" in /tmp/*) shared+=("$p") ;; esac
  done
  mkdir -p /run/stoker-real-tmp
  # shellcheck disable=SC2016
  unshare -m --propagation private sh -c '
    set -e
    mount --bind /tmp /run/stoker-real-tmp
    mount --bind "$1" /tmp
    shift
    for p in "$@"; do
      mkdir -p "$p"
      mount --bind "/run/stoker-real-tmp/${p#/tmp/}" "$p"
    done
    exec slurmd -N n2' n2 "$dir/n2-tmp" "${shared[@]}"
}

# Stops the daemons in the given pid files together (each takes ~2 s to exit):
# TERM, then KILL what is left after 10 s; removes the files.
stop_pidfiles() {
  local f pid pids=() i
  for f in "$@"; do
    pid=$(read_pid "$f")
    pid_alive "$pid" && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$f"
  done
  [ ${#pids[@]} -gt 0 ] || return 0
  for i in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do pid_alive "$pid" && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}

stop() {
  owned || { [ -e "$conf" ] && die "$conf was not written by this script; refusing"; return 0; }
  # Jobs first, so no stepd outlives its slurmd.
  if pid_alive "$(read_pid "$dir/run/slurmctld.pid")"; then
    local jobs
    jobs=$(squeue -h -o %i 2>/dev/null || true)
    [ -n "$jobs" ] && scancel $jobs 2>/dev/null && sleep 1
  fi
  stop_pidfiles "$dir/run/slurmd-n1.pid" "$dir/run/slurmd-n2.pid" "$dir/run/slurmctld.pid"
  # munged: stopped with the last cluster that uses it, and only if this script started it.
  if [ -f "$munge_users" ]; then
    grep -vxF "$dir" "$munge_users" >"$munge_users.new" || true
    mv "$munge_users.new" "$munge_users"
    if [ ! -s "$munge_users" ]; then
      rm -f "$munge_users"
      if [ -f "$munge_ours" ]; then stop_pidfiles "$munge_ours"; fi
    fi
  fi
  local watcher
  watcher=$(read_pid "$dir/run/watch.pid")
  if [ -n "$watcher" ] && [ "$watcher" != "${STOKER_CLUSTER_WATCHER:-}" ]; then
    stop_pidfiles "$dir/run/watch.pid"
  fi
  rm -f "$dir/run/watch.pid"
  echo "local-cluster: stopped ($dir)"
}

# Starts again a daemon of the cluster that is gone, naming it and any core file: Slurm
# 22.05's slurmd once aborted (glibc heap corruption in its hostlist code, two steps of one
# job launching at once), and every later test then failed on a node that never came back.
# The test that was running when it died still fails; the ones after it get whole nodes.
revive() {
  local gone="" n
  [ -f "$dir/skip-reason" ] && return 0  # never started here
  pid_alive "$(read_pid "$dir/run/slurmctld.pid")" || gone+=" slurmctld"
  for n in n1 n2; do pid_alive "$(read_pid "$dir/run/slurmd-$n.pid")" || gone+=" slurmd-$n"; done
  [ -z "$gone" ] && return 0
  local cores
  cores=$(find "$dir/log" "$dir/spool" -maxdepth 2 -name 'core*' -newer "$conf" 2>/dev/null | tr '\n' ' ')
  echo "local-cluster: gone:$gone (core files: ${cores:-none}); starting again" >&2
  # The daemons belong to the cluster, not to the test that found them gone: without the
  # faults harness's tag, which would count them as that test's leftovers.
  unset STOKER_FAULTS_RUN
  # The plugin's folder, for n2's private /tmp (start_n2).
  plugin=$(awk '$1 == "optional" || $1 == "required" {print $2; exit}' \
    "$dir"/plugstack.conf.d/stoker.conf 2>/dev/null || true)
  case $gone in *slurmctld*) slurmctld ;; esac  # without -c: it recovers its saved state
  case $gone in *slurmd-n1*) slurmd -N n1 ;; esac
  case $gone in *slurmd-n2*) start_n2 ;; esac
  local i
  for i in $(seq 100); do nodes_idle && return 0; sleep 0.3; done
  die "the restarted daemons did not bring both nodes back to idle: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')"
}

# Cancels every job left on the cluster and waits (up to 30 s) until both nodes are idle:
# a test whose srun was killed by a timeout must not leave its job holding the nodes,
# or every later test queues behind it and times out too. A daemon that is gone is started
# again first (revive).
clear() {
  owned || die "no cluster of this script in $dir"
  export SLURM_CONF=$conf
  revive
  [ -z "$(squeue -h -o %i 2>/dev/null)" ] && return 0
  echo "local-cluster: cancelling jobs left by an earlier run: $(squeue -h -o '%i %j' | tr '\n' ' ')" >&2
  scancel --full "$(squeue -h -o %i | tr '\n' ',' | sed 's/,$//')" 2>/dev/null || true
  local i
  for i in $(seq 1 60); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && nodes_idle && return 0
    sleep 0.5
  done
  die "jobs still on the cluster after 30 s: $(squeue -h -o '%i %j %T' | tr '\n' ' ')"
}

# Sets MpiDefault of the running cluster: srun reads it from slurm.conf at each launch; the
# daemons are told to re-read the file, so that their copy of the config stays the same.
set_mpi_default() {
  check_owned
  case ${1:-} in none|pmix) ;; *) die "mpi-default: none or pmix, not '${1:-}'" ;; esac
  sed -i "s/^MpiDefault=.*/MpiDefault=$1/" "$conf"
  scontrol reconfigure
  echo "local-cluster: MpiDefault=$1"
}

status() {
  owned || die "no cluster of this script in $dir"
  local d pid up=0
  for d in slurmctld slurmd-n1 slurmd-n2; do
    pid=$(read_pid "$dir/run/$d.pid")
    if pid_alive "$pid"; then echo "$d: running (pid $pid)"; up=$((up + 1)); else echo "$d: stopped"; fi
  done
  [ $up = 3 ] && sinfo -N
  [ $up = 3 ]
}

case $cmd in
  start) start "$@" ;;
  stop) stop ;;
  status) status ;;
  clear) clear ;;
  mpi-default) set_mpi_default "$@" ;;
  env) echo "export SLURM_CONF=$conf" ;;
  _watch)
    owner=$1
    while kill -0 "$owner" 2>/dev/null; do sleep 1; done
    STOKER_CLUSTER_WATCHER=$$ stop
    ;;
  *) usage ;;
esac
