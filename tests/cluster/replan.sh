#!/bin/sh
# Run as a Slurm task by the cluster tests (replan_test.cpp): writes the plan the plugin
# exported to this task and the one `stoker plan --ignore-env` recomputes inside it to
# OUT_DIR/<SLURM_PROCID>.exported.json and OUT_DIR/<SLURM_PROCID>.recomputed.json. Files,
# not stdout: Slurm forwards output in 1024-byte messages, and longer lines of two tasks
# can interleave.
#   replan.sh OUT_DIR STOKER_CLI [ARGS FOR THE RECOMPUTATION...]
set -e
out=$1 cli=$2
shift 2
p=${SLURM_PROCID:-x}
"$cli" plan --json >"$out/$p.exported.json"
"$cli" plan --json --ignore-env "$@" >"$out/$p.recomputed.json"
