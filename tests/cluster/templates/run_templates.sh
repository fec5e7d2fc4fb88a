#!/usr/bin/env bash
# Submits every user template in sbatch_templates/ to the local two-node Slurm cluster and
# checks that each job exits 0 with the expected output lines.
#
#   tests/cluster/templates/run_templates.sh CLUSTER_DIR BIN_DIR [PLUGIN]
#
# CLUSTER_DIR  a running cluster of scripts/local-cluster.sh with stoker's plugin loaded:
#                scripts/local-cluster.sh start CLUSTER_DIR --plugin build/spank_plugin/spank_stoker.so
#              SLURM_CONF is taken from CLUSTER_DIR/slurm.conf. When CLUSTER_DIR/skip-reason
#              exists (the harness could not start a cluster here), the test skips (exit 77).
# BIN_DIR      the folder holding the built stoker_train and stoker_make_data
#              (build/runtime/examples).
# PLUGIN       optional: the built spank_stoker.so; when given, the cluster's plugstack line
#              is first reset to load it with no arguments (the state cluster.start leaves),
#              so settings another test left behind do not leak into the templates.
# Environment (optional):
#   PYTHON                   the Python with torch for the DDP template (default /usr/bin/python3)
#   STOKER_PYTHONPATH        where stoker's Python module is (build/python) when it is not
#                            installed; the DDP template imports it
#   STOKER_TEMPLATE_TIMEOUT  seconds each job may take from its submission (default 240): a
#                            guard against hangs, not a speed check. The five jobs share the
#                            two nodes, so one may queue behind the others for a minute, and
#                            sbatch --wait notices a job's end up to ~30 s late (it polls)
#
# The cluster's GPUs are fake (gres on character devices): the GPU templates run the
# trainer's CPU fallback there, and the DDP template the gloo backend. Work files (data,
# job output) go to CLUSTER_DIR/jobs/templates: outside /tmp, since node n2 has a private /tmp.
# Open MPI runs with OMPI_MCA_btl=tcp,self over the loopback between the emulated nodes
# (they share one host; the notes in shared/notes/local-slurm-cluster.md say why).
# Exit status: 0 all passed; 1 a check failed (the job's output is printed); 77 skipped.
set -euo pipefail

[ $# -eq 2 ] || [ $# -eq 3 ] || { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
cluster=$(cd "$1" && pwd -P)
bin=$(cd "$2" && pwd -P)
src=$(cd "$(dirname "$0")/../../.." && pwd -P)
export PATH=/usr/sbin:/sbin:$PATH

if [ -f "$cluster/skip-reason" ]; then
  echo "SKIP: no local cluster: $(cat "$cluster/skip-reason")"
  exit 77
fi
[ -f "$cluster/slurm.conf" ] || { echo "FAIL: $cluster/slurm.conf missing: start the cluster first"; exit 1; }
export SLURM_CONF=$cluster/slurm.conf
"$(dirname "$0")/../../../scripts/local-cluster.sh" clear "$cluster"  # jobs an earlier test left
if [ $# -eq 3 ]; then
  [ -f "$3" ] || { echo "FAIL: plugin $3 not found"; exit 1; }
  echo "optional $(realpath "$3")" >"$cluster/plugstack.conf.d/stoker.conf"
fi
for b in stoker_train stoker_make_data; do
  [ -x "$bin/$b" ] || { echo "FAIL: $bin/$b not built"; exit 1; }
done

work=$cluster/jobs/templates
rm -rf "$work"
mkdir -p "$work"
cd "$work"
timeout_s=${STOKER_TEMPLATE_TIMEOUT:-240}
failures=0

# Small learnable data: 4 colour classes of 64x48 JPEGs; topic-structured tokens.
"$bin/stoker_make_data" images "$work/images" --classes 4 --per-class 64 --width 64 --height 48 >/dev/null
"$bin/stoker_make_data" tokens "$work/tokens.bin" --tokens 120000 >/dev/null

# What every job inherits (sbatch exports the submitting environment).
export STOKER_TRAIN=$bin/stoker_train PYTHON=${PYTHON:-/usr/bin/python3}
export DDP_SCRIPT=$src/sbatch_templates/pytorch_ddp_train.py
export EPOCHS=4
set -a
. "$src/scripts/mpi-loopback.env"
set +a
. "$src/scripts/open-mpi-race.sh"

# submit NAME TEMPLATE [VAR=VALUE ...]: runs the job to its end in the background; its
# exit status goes to NAME.rc (also when it failed: the subshell must not stop at set -e).
declare -A how  # NAME -> its submit arguments, to submit it once more
submit() {
  local name=$1 template=$2
  how[$name]=$(printf '%q ' "$@")
  shift 2
  (rc=0
   env "$@" timeout "$timeout_s" sbatch --wait --job-name="tpl-$name" -o "$work/$name.out" \
     -e "$work/$name.err" "$src/sbatch_templates/$template" >"$work/$name.sbatch" 2>&1 || rc=$?
   echo "$rc" >"$work/$name.rc") &
}

# Open MPI's TCP wire-up race (scripts/open-mpi-race.sh) can kill an MPI job before any
# stoker code runs: such a job is submitted once more, its first output kept as NAME.first.*.
resubmit_race_victims() {
  local name again=0
  for name in "$@"; do
    [ "$(cat "$work/$name.rc" 2>/dev/null)" != 0 ] || continue
    open_mpi_race_in "$work/$name.err" "$work/$name.out" || continue
    echo "note [$name]: $open_mpi_race_note; submitting the job once more"
    for f in sbatch out err; do mv -f "$work/$name.$f" "$work/$name.first.$f" 2>/dev/null || true; done
    eval "submit ${how[$name]}"
    again=1
  done
  [ "$again" = 0 ] || wait
}

fail() {
  echo "FAIL [$1]: $2"
  for f in "$work/$1".{sbatch,out,err}; do
    [ -s "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }
  done
  failures=$((failures + 1))
}

# expect NAME FILE COUNT REGEX: exactly COUNT lines of FILE match REGEX (COUNT "+": >= 1).
expect() {
  local name=$1 file=$work/$1.$2 count=$3 regex=$4 n
  n=$(grep -cE -- "$regex" "$file" 2>/dev/null || true)
  if [ "$count" = + ]; then
    [ "${n:-0}" -ge 1 ] || { fail "$name" "no line of $2 matches /$regex/"; }
  else
    [ "${n:-0}" -eq "$count" ] || { fail "$name" "$n lines of $2 match /$regex/, expected $count"; }
  fi
}

# The "loss first X last Y" figures of a done line must show learning: Y < X.
expect_learning() {
  local name=$1 line first last
  line=$(grep -E -- "$2" "$work/$name.out" | tail -n 1)
  first=$(sed -nE 's/.*loss first ([0-9.]+).*/\1/p' <<<"$line")
  last=$(sed -nE 's/.*last ([0-9.]+).*/\1/p' <<<"$line")
  if [ -z "$first" ] || [ -z "$last" ] || ! awk -v a="$first" -v b="$last" 'BEGIN{exit !(b < a)}'; then
    fail "$name" "loss did not decrease: '$line'"
  fi
}

# Every step of the templates ends when one of its ranks dies: a CI run's multi-node job had
# two ranks crash (Open MPI's race) and the other two wait in MPI until the test's limit.
for t in "$src"/sbatch_templates/*.sbatch; do
  if grep -E '^[[:space:]]*srun ' "$t" | grep -qv -- '--kill-on-bad-exit=1'; then
    fail "$(basename "$t" .sbatch)" "a step without srun --kill-on-bad-exit=1"
  fi
done

started=$(date +%s)
submit single single_node_multi_gpu.sbatch DATA="$work/images"
submit multi multi_node.sbatch DATA="$work/images"
submit cpu cpu_only.sbatch DATA="$work/tokens.bin"
templates="single multi cpu ddp"
# The DDP template imports stoker (its DataLoader settings come from stoker.plan()).
export PYTHONPATH=${STOKER_PYTHONPATH:+$STOKER_PYTHONPATH${PYTHONPATH:+:}}${PYTHONPATH:-}
if "$PYTHON" -c 'import stoker, torch' 2>/dev/null; then
  submit ddp pytorch_ddp.sbatch DATA="$work/images"
  # torchrun on the CPU: no GPUs, two workers per node, each printing its plan first.
  submit torchrun torchrun.sbatch SBATCH_GPUS_PER_NODE=0 NPROC_PER_NODE=2 DATA="$work/images" \
    DDP_SCRIPT="$src/tests/cluster/templates/torchrun_worker.py" TRAIN_SCRIPT="$DDP_SCRIPT"
  templates="$templates torchrun"
elif [ -d "${STOKER_PYTHONPATH:-/nonexistent}/stoker" ]; then
  # The build made the module: templates that cannot import it fail, they are not skipped.
  fail ddp "$PYTHON cannot import stoker and torch from $STOKER_PYTHONPATH (torchrun neither): $("$PYTHON" -c 'import stoker, torch' 2>&1 | tail -n 1)"
  templates="single multi cpu"
else
  echo "skip [ddp, torchrun] $PYTHON cannot import stoker and torch (build the Python module, or set STOKER_PYTHONPATH)"
  templates="single multi cpu"
fi
wait
resubmit_race_victims single multi cpu
elapsed=$(( $(date +%s) - started ))

for name in $templates; do
  rc=$(cat "$work/$name.rc" 2>/dev/null || echo missing)
  [ "$rc" = 0 ] || fail "$name" "sbatch --wait exited $rc (124: over ${timeout_s}s)"
done

# Every rank prints where its plan came from: the plugin's STOKER_* variables, or (when the
# plugin leaves a task untuned, as it does for GPU ids it cannot find on the fake GPUs) one
# computed in-process.
rank_line='^stoker_train: rank [0-9]+/%d .*plan from (the STOKER_\* environment|computed on)'
env_line='^stoker_train: rank [0-9]+/%d .*plan from the STOKER_\* environment'
# The plugin's word on each rank of the srun step (--stoker-verbose): its plan, or why it left
# the task alone (the fake GPUs). The batch step's own "not tuned" line is not counted.
plugin_line='^stoker: (rank [0-9]+ \(local [0-9]+/[0-9]+\): profile=|warning: rank [0-9]+: GPU ids )'
# single node, 2 GPUs: two ranks on one node, fake GPUs -> the trainer's CPU path, said out loud.
expect single out 2 "$(printf "$rank_line" 2)"
expect single out 2 '^stoker_train: rank [01]/2: device cpu \('
expect single out 1 'gradients: MPI_Allreduce over 2 ranks'
expect single out 1 '^stoker_train: done: .* samples/s; loss first .* input wait'
expect single err 2 "$plugin_line"
expect_learning single '^stoker_train: done:'

# multi-node: four ranks, two per node, both nodes used.
expect multi out 4 "$(printf "$rank_line" 4)"
expect multi out 2 'local [01]/2, host n1,'
expect multi out 2 'local [01]/2, host n2,'
expect multi out 1 'gradients: MPI_Allreduce over 4 ranks'
expect multi out 1 '^stoker_train: done: '
expect multi err 4 "$plugin_line"
expect_learning multi '^stoker_train: done:'

# CPU only: two ranks on two nodes, token task, no GPU anywhere.
expect cpu out 2 "$(printf "$env_line" 2)"
expect cpu out 2 'device cpu \(--device cpu\)'
expect cpu out 1 '^stoker_train: done: '
expect cpu err 2 '^stoker: rank [01] \(local 0/1\): profile=nlp '
expect_learning cpu '^stoker_train: done:'

# PyTorch DDP: four ranks from the plugin's RANK/WORLD_SIZE/MASTER_*, gloo on the CPU.
if [ "${templates% ddp}" != "$templates" ]; then
  expect ddp out 4 '^ddp: rank [0-3]/4 local [01] backend gloo device cpu DataLoader\(num_workers=[1-9]'
  expect ddp out 1 '^ddp: done: .* loss first .* backend gloo'
  expect ddp err 4 "$plugin_line"
  expect_learning ddp '^ddp: done:'
fi

# torchrun: one agent per node tuned by the plugin, two workers per node; each worker's plan
# is its share of the agent's CPUs (disjoint on a node), and the loss goes down.
if [ "${templates% torchrun}" != "$templates" ]; then
  worker_line='^torchrun-worker: rank [0-3]/4 local [01]/2 node n[12] cpus [0-9].* source computed on .* under a launcher'
  expect torchrun out 4 "$worker_line"
  expect torchrun out 2 '^torchrun-worker: rank [0-3]/4 local [01]/2 node n1 cpus '
  expect torchrun out 1 '^ddp: done: .* loss first .* backend gloo'
  expect_learning torchrun '^ddp: done:'
  if ! grep -E "$worker_line" "$work/torchrun.out" | "$PYTHON" -c '
import sys
seen = {}
for line in sys.stdin:
    words = line.split()
    node, cpus = words[words.index("node") + 1], words[words.index("cpus") + 1]
    ids = set()
    for part in cpus.split(","):
        first, _, last = part.partition("-")
        ids |= set(range(int(first), int(last or first) + 1))
    if seen.get(node, set()) & ids:
        sys.exit(f"node {node}: workers share CPUs {sorted(seen[node] & ids)}")
    seen[node] = seen.get(node, set()) | ids
'; then
    fail torchrun "the workers of a node share CPUs"
  fi
fi

if [ "$failures" -gt 0 ]; then
  echo "templates: $failures check(s) failed (${elapsed}s)"
  exit 1
fi
echo "templates: all of $templates passed on the local cluster in ${elapsed}s"
for name in single multi cpu; do grep -h '^stoker_train: done:' "$work/$name.out" | sed "s/^/  $name: /"; done
for name in ddp torchrun; do
  if [ -f "$work/$name.out" ]; then grep -h '^ddp: done:' "$work/$name.out" | sed "s/^/  $name: /"; fi
done
