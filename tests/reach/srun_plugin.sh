#!/usr/bin/env bash
# reach.faults_srun_SUITE: the SUITE root's own `srun --help` (its Slurm, its glibc; a minimal
# slurm.conf naming a plugstack, no daemon) loads the plugin built for it: the --stoker flags
# are listed. The plugin built for the root of OTHER (another Slurm release) is refused with
# a line an admin understands, and no --stoker flag is listed: Slurm 21.08 and later refuse it
# themselves ("Incompatible Slurm plugin ... version (24.11.5)", naming the plugin's release);
# 20.11 loads any SPANK plugin, so the plugin's own release gate
# (spank_plugin/slurm_version_gate.cpp) says it there.
#
#   tests/reach/srun_plugin.sh SUITE OTHER PLUGINS_DIR WORK_DIR
#
# PLUGINS_DIR/SUITE holds the package reach.plugin_SUITE built. Exit 77 when a root or a
# package is missing.
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 4 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
suite=$1 other=$2 plugins=$3 work=$4
root_of "$other"; other_root=$REPLY
root_of "$suite"; root=$REPLY
rm -rf "$work" && mkdir -p "$work"
plugin_of "$plugins" "$suite" "$work"; own=$REPLY
plugin_of "$plugins" "$other" "$work"; foreign=$REPLY
write_srun_conf "$work/own" "$own"
running=$(slurm_of "$root" "$work/own")
echo "$suite runs Slurm $running"
out=$(in_root "$root" "$work/own" env SLURM_CONF=/mnt/slurm.conf srun --help 2>&1) || true
check "$suite's srun lists --stoker" '^ +--stoker(\[|=|[[:space:]])' "$out"
check "$suite's srun lists --stoker-profile" '--stoker-profile' "$out"
check_not "no error loading its own release's plugin" 'error:|Incompatible' "$out"

write_srun_conf "$work/foreign" "$foreign"
foreign_release=$(slurm_of "$other_root" "$work/foreign")  # the foreign plugin's Slurm
out=$(in_root "$root" "$work/foreign" env SLURM_CONF=/mnt/slurm.conf srun --help 2>&1) || true
check_not "$suite's srun lists no --stoker flag from $other's plugin" '^ +--stoker' "$out"
case $running in
  20.*|21.0[0-7]*)  # SPANK plugins unchecked by Slurm: stoker's own gate
    check "the plugin says it was built for Slurm ${foreign_release%.*}" \
      "stoker: this plugin was built for Slurm ${foreign_release%.*} but Slurm $running is running: it stays unloaded" "$out" ;;
  *)  # naming the plugin's release (a 20.11 build once read "version (0.00.1)")
    check "Slurm refuses $other's plugin, built for $foreign_release" \
      "Incompatible Slurm plugin /mnt/spank_stoker.so version \($foreign_release\)" "$out" ;;
esac
echo "$out" | grep -E 'stoker|Incompatible' | sed 's/^/  /'
finish
