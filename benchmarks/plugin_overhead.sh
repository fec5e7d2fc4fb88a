#!/usr/bin/env bash
# Plugin overhead: the time spank_stoker.so adds to a job step launch, with its default
# configuration (live discovery through the topology cache), cold and warm.
#
#   benchmarks/plugin_overhead.sh [BUILD_DIR] [RUNS]      # as root, or a sudoer
#
# Starts the local two-node cluster (scripts/local-cluster.sh) in BUILD_DIR/bench-cluster,
# then times `srun -N2 -n4 true` RUNS times (default 15) in each setting, alternating them
# run by run so that drift (caches, other load) hits all alike:
#   off        no plugstack line: the plugin is not loaded at all (the baseline)
#   loaded     enable=opt-in, a job without flags: options and init only
#   cold       enable=always, the topology cache removed before each step: discovery
#              (without I/O devices: the step has no GPUs), cache written, plan, bind, export
#   warm       enable=always, the cache present: read, plan, bind, export
#   gpu-off    off, for a step with GPUs (--gpus-per-node=1; the cluster's GPUs are fake, so
#   gpu-cold   the tasks run untuned after the plugin's work, which is what is timed here)
#   gpu-warm   cold and warm for that step: discovery with PCI devices, its own cache file
# Then runs a few cold and warm steps with --stoker-verbose and prints the medians of the
# plugin's own clock: task_init per task and the node's step setup (decide, load).
# Prints the workload, the settings and the medians (ms) side by side, and the difference to
# the baseline. The cluster is stopped on exit, also on failure or Ctrl-C.
set -euo pipefail
. "$(dirname "$0")/../scripts/as-root.sh" && as_root plugin_overhead "it starts a local Slurm cluster" "$@"
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
runs=${2:-15}
plugin=$build/spank_plugin/spank_stoker.so
dir=$build/bench-cluster
cache=$dir/topology-cache
shape=(-N2 -n4)
[ -f "$plugin" ] || { echo "plugin_overhead: $plugin not built (cmake --build $build)" >&2; exit 1; }

scripts/local-cluster.sh start "$dir" >/dev/null
trap 'scripts/local-cluster.sh stop "$dir" >/dev/null' EXIT
export SLURM_CONF=$dir/slurm.conf
conf=$dir/plugstack.conf.d/stoker.conf

# Sets the plugstack line for `mode`; prints the srun arguments of its step.
set_mode() {
  case $1 in
    off | gpu-off) rm -f "$conf" ;;
    loaded) echo "optional $plugin enable=opt-in" >"$conf" ;;
    *) echo "optional $plugin enable=always topology_cache=$cache" >"$conf" ;;
  esac
  case $1 in cold | gpu-cold) rm -rf "$cache" ;; esac
  case $1 in gpu-*) echo --gpus-per-node=1 ;; esac
}

# Milliseconds (3 decimals) of one `srun ... true`.
time_step() {
  local t0 t1
  t0=$(date +%s%N)
  srun "${shape[@]}" "$@" true
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'
}

median() { sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m}'; }

modes=(off loaded cold warm gpu-off gpu-cold gpu-warm)
declare -A samples
for mode in "${modes[@]}"; do time_step $(set_mode "$mode") >/dev/null; done  # warm-up
for i in $(seq "$runs"); do
  for mode in "${modes[@]}"; do
    samples[$mode]+="$(time_step $(set_mode "$mode")) "
  done
done
# The tuned runs must really be tuned, or the comparison means nothing.
set_mode warm >/dev/null
srun "${shape[@]}" printenv STOKER_PLAN_VERSION >/dev/null ||
  { echo "plugin_overhead: the tuned mode did not export a plan" >&2; exit 1; }

echo "workload: srun ${shape[*]} true on a local 2-node Slurm $(srun --version | awk '{print $2}')" \
  "cluster, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), $runs runs per mode, alternating"
printf '%-10s %12s %14s\n' mode "median ms" "added ms"
for mode in "${modes[@]}"; do
  base=off
  [[ $mode == gpu-* ]] && base=gpu-off
  b=$(tr ' ' '\n' <<<"${samples[$base]}" | grep . | median)
  m=$(tr ' ' '\n' <<<"${samples[$mode]}" | grep . | median)
  printf '%-10s %12s %14s\n' "$mode" "$m" "$(awk -v a="$m" -v b="$b" 'BEGIN { printf "%+.1f", a - b }')"
done

# The plugin's own clock (--stoker-verbose): "task_init took X ms; ... step setup took Y ms".
echo "plugin clock, medians of 5 steps x 4 tasks (ms):"
printf '%-10s %12s %14s\n' mode task_init "step setup"
for mode in cold warm gpu-cold gpu-warm; do
  lines=$(for i in 1 2 3 4 5; do
    srun "${shape[@]}" $(set_mode "$mode") --stoker-verbose true 2>&1 | grep 'task_init took' || true
  done)
  [ -n "$lines" ] || { echo "plugin_overhead: no task_init line in $mode" >&2; exit 1; }
  task=$(sed -n 's/.*task_init took \([0-9.]*\) ms.*/\1/p' <<<"$lines" | median)
  setup=$(sed -n 's/.*step setup took \([0-9.]*\) ms.*/\1/p' <<<"$lines" | median)
  printf '%-10s %12s %14s\n' "$mode" "$task" "$setup"
done
