#!/usr/bin/env bash
# Kills the DDP template's training mid-epoch and resumes it on another number of ranks:
# the resumed job must see every sample the checkpoint left of the epoch exactly once.
#
#   tests/cluster/templates/resume_ddp.sh CLUSTER_DIR BIN_DIR INPUT [PLUGIN]
#
# CLUSTER_DIR  a running local cluster with stoker's plugin (see run_templates.sh); its
#              skip-reason file makes this exit 77 (skipped)
# BIN_DIR      the folder holding stoker_make_data (build/runtime/examples)
# INPUT        dataloader (a DataLoader with stoker.DistributedSampler) or stoker
#              (stoker.Loader.images): pytorch_ddp_train.py's --input
# PLUGIN       optional: the built spank_stoker.so; the cluster's plugstack line is reset
#              to load it with no arguments (settings other tests left do not leak in)
# Environment: PYTHON (default /usr/bin/python3), STOKER_PYTHONPATH (build/python).
#
# pytorch_ddp.sbatch runs on 2 ranks, saving a checkpoint every 7 steps (never on an epoch's
# last step) and logging every sample it takes; once a checkpoint exists the job is killed
# (scancel -s KILL, as a node failure would). It is then submitted again on 3 ranks with
# --resume, up to the end of the checkpoint's epoch, and check_resume.py compares the logs.
set -euo pipefail

[ $# -eq 3 ] || [ $# -eq 4 ] || { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
cluster=$(cd "$1" && pwd -P)
bin=$(cd "$2" && pwd -P)
input=$3
here=$(cd "$(dirname "$0")" && pwd -P)
src=$(cd "$here/../../.." && pwd -P)
export PATH=/usr/sbin:/sbin:$PATH

if [ -f "$cluster/skip-reason" ]; then
  echo "SKIP: no local cluster: $(cat "$cluster/skip-reason")"
  exit 77
fi
export SLURM_CONF=$cluster/slurm.conf PYTHON=${PYTHON:-/usr/bin/python3}
if [ $# -eq 4 ]; then
  echo "optional $(realpath "$4")" >"$cluster/plugstack.conf.d/stoker.conf"
fi
set -a  # the jobs inherit it: Open MPI over the loopback (stoker agrees over MPI under srun)
. "$src/scripts/mpi-loopback.env"
set +a
export PYTHONPATH=${STOKER_PYTHONPATH:+$STOKER_PYTHONPATH${PYTHONPATH:+:}}${PYTHONPATH:-}
"$PYTHON" -c 'import stoker, torch' || { echo "SKIP: $PYTHON cannot import stoker and torch"; exit 77; }

work=$cluster/jobs/resume-$input  # outside /tmp: node n2 has a private one
rm -rf "$work"
mkdir -p "$work"
cd "$work"
"$bin/stoker_make_data" images "$work/images" --classes 4 --per-class 150 --width 20 \
  --height 20 >/dev/null
export DATA=$work/images DDP_SCRIPT=$src/sbatch_templates/pytorch_ddp_train.py
common="--input $input --batch-size 4 --image-size 16 --checkpoint $work/ckpt.pt --checkpoint-every 7"

fail() {
  echo "FAIL [$input]: $1"
  for f in "$work"/*.out; do echo "--- $f"; tail -n 30 "$f"; done
  exit 1
}

# Run 1: 2 ranks, many epochs (it never ends by itself), killed after its first checkpoint.
job=$(EPOCHS=50 TRAIN_ARGS="$common --log-indices $work/run1" sbatch --parsable -n2 \
  --job-name=resume-1 -o "$work/run1.out" "$src/sbatch_templates/pytorch_ddp.sbatch")
for _ in $(seq 600); do
  [ -f "$work/ckpt.pt" ] && break
  squeue -h -j "$job" 2>/dev/null | grep -q . || fail "job $job ended before its first checkpoint"
  sleep 0.2
done
[ -f "$work/ckpt.pt" ] || fail "no checkpoint after 120 s"
scancel -s KILL --full "$job"
for _ in $(seq 300); do
  squeue -h -j "$job" 2>/dev/null | grep -q . || break
  sleep 0.2
done
squeue -h -j "$job" 2>/dev/null | grep -q . && fail "job $job still runs after the kill"

# Run 2: 3 ranks, from the checkpoint to the end of its epoch.
epoch=$("$PYTHON" -c 'import sys, torch; print(torch.load(sys.argv[1])["input"]["epoch"])' \
  "$work/ckpt.pt")
cp "$work/ckpt.pt" "$work/killed.pt"  # the state the resume starts from (run 2 saves too)
rc=0
EPOCHS=$((epoch + 1)) TRAIN_ARGS="$common --resume $work/killed.pt --log-indices $work/run2" \
  timeout 300 sbatch --wait -n3 --job-name=resume-2 -o "$work/run2.out" \
  "$src/sbatch_templates/pytorch_ddp.sbatch" >/dev/null || rc=$?
[ "$rc" -eq 0 ] || fail "the resumed job exited $rc"
grep -q "^ddp: rank 0: resumed epoch $epoch at sample" "$work/run2.out" ||
  fail "the resumed job did not say where it resumed"
"$PYTHON" "$here/check_resume.py" "$work/killed.pt" "$work/run1" 2 "$work/run2" 3 4 ||
  fail "the resumed run did not see the rest of the epoch exactly once"
rm -rf "$work"
