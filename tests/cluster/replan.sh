#!/bin/sh
# Run as a Slurm task by the cluster tests (replan_test.cpp): prints the plan the plugin
# exported to this task and the one `stoker plan --ignore-env` recomputes inside it, one
# JSON line each, as "<SLURM_PROCID> exported=..." and "<SLURM_PROCID> recomputed=...".
#   replan.sh STOKER_CLI [ARGS FOR THE RECOMPUTATION...]
cli=$1
shift
p=${SLURM_PROCID:-x}
echo "$p exported=$("$cli" plan --json | tr -d '\n')"
echo "$p recomputed=$("$cli" plan --json --ignore-env "$@" | tr -d '\n')"
