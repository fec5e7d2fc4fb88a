#!/usr/bin/env bash
# Plugin overhead: the time spank_stoker.so adds to a job step launch.
#
#   sudo benchmarks/plugin_overhead.sh [BUILD_DIR] [RUNS]
#
# Starts the local two-node cluster (scripts/local-cluster.sh) in BUILD_DIR/bench-cluster,
# then times `srun -N1 -n1 true` RUNS times (default 20) in each of three settings,
# alternating them run by run so that drift (caches, other load) hits all alike:
#   off      no plugstack line: the plugin is not loaded at all (the baseline)
#   loaded   loaded with enable=opt-in, job without flags: options and init only
#   tuned    enable=always: live topology discovery, plan, bind and export for the task
#   tuned-xml  enable=always topology_xml=<this machine, lstopo --of xml>: no discovery
#            (an XML is never "this system" for hwloc, so binding is skipped there)
# Prints the workload, the settings and the medians (ms) side by side, and the
# difference to `off`. The cluster is stopped on exit, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build}")
runs=${2:-20}
plugin=$build/spank_plugin/spank_stoker.so
dir=$build/bench-cluster
[ -f "$plugin" ] || { echo "plugin_overhead: $plugin not built (cmake --build $build)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "plugin_overhead: needs root (a local Slurm cluster)" >&2; exit 1; }

scripts/local-cluster.sh start "$dir" >/dev/null
trap 'scripts/local-cluster.sh stop "$dir" >/dev/null' EXIT
export SLURM_CONF=$dir/slurm.conf
conf=$dir/plugstack.conf.d/stoker.conf

set_mode() {
  case $1 in
    off) rm -f "$conf" ;;
    loaded) echo "optional $plugin enable=opt-in" >"$conf" ;;
    tuned) echo "optional $plugin enable=always" >"$conf" ;;
    tuned-xml) echo "optional $plugin enable=always topology_xml=$dir/this-node.xml" >"$conf" ;;
  esac
}

# Milliseconds (3 decimals) of one `srun true`.
time_step() {
  local t0 t1
  t0=$(date +%s%N)
  srun -N1 -n1 true
  t1=$(date +%s%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'
}

median() { sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m}'; }

lstopo-no-graphics -f --of xml "$dir/this-node.xml"
modes=(off loaded tuned tuned-xml)
declare -A samples
for mode in "${modes[@]}"; do set_mode "$mode"; time_step >/dev/null; done  # warm-up
for i in $(seq "$runs"); do
  for mode in "${modes[@]}"; do
    set_mode "$mode"
    samples[$mode]+="$(time_step) "
  done
done
# The tuned run must really be tuned, or the comparison means nothing.
set_mode tuned
srun -N1 -n1 printenv STOKER_PLAN_VERSION >/dev/null ||
  { echo "plugin_overhead: the tuned mode did not export a plan" >&2; exit 1; }

echo "workload: srun -N1 -n1 true on a local 2-node Slurm $(srun --version | awk '{print $2}') cluster," \
  "$(nproc) CPUs, $runs runs per mode, alternating"
base=$(tr ' ' '\n' <<<"${samples[off]}" | grep . | median)
printf '%-10s %12s %14s\n' mode "median ms" "added ms"
for mode in "${modes[@]}"; do
  m=$(tr ' ' '\n' <<<"${samples[$mode]}" | grep . | median)
  printf '%-10s %12s %14s\n' "$mode" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%+.1f", a - b }')"
done
