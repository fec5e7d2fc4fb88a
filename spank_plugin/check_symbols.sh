#!/bin/sh
# Post-build check of spank_stoker.so. A MODULE links with undefined symbols allowed
# (spank_* and slurm_* come from srun/sbatch/slurmstepd at load time), so a missing
# stoker function would only show when Slurm fails to load the plugin. Fail the build
# instead; also check that only Slurm's entry points are exported.
set -eu
so=$1
missing=$(nm -D --undefined-only "$so" | awk '{print $NF}' | grep '6stoker' | c++filt || true)
if [ -n "$missing" ]; then
  echo "check_symbols: $so uses stoker functions that no library defines:" >&2
  echo "$missing" >&2
  exit 1
fi
extra=$(nm -D --defined-only "$so" | awk '{print $NF}' |
  grep -Ev '^(slurm_spank_|plugin_|spank_plugin_)' || true)
if [ -n "$extra" ]; then
  echo "check_symbols: $so exports more than Slurm's entry points:" >&2
  echo "$extra" >&2
  exit 1
fi
for sym in plugin_name plugin_type plugin_version spank_plugin_version slurm_spank_init; do
  nm -D --defined-only "$so" | awk '{print $NF}' | grep -qx "$sym" ||
    { echo "check_symbols: $so does not export $sym (Slurm would skip it)" >&2; exit 1; }
done
