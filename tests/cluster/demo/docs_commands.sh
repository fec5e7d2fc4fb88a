#!/usr/bin/env bash
# Runs the commands that docs/user-guide.md and docs/admin-guide.md show and that the demo
# (scripts/demo.sh) does not run itself, and checks their output. No cluster or root needed.
#
#   tests/cluster/demo/docs_commands.sh BUILD_DIR WORK_DIR
#
# BUILD_DIR  a build with stoker and stoker_make_data (the Python checks run when
#            BUILD_DIR/python/stoker exists; `cmake --install` goes to a scratch DESTDIR)
# WORK_DIR   scratch folder (emptied)
# PYTHON (optional): the interpreter with torch and numpy (default /usr/bin/python3)
# STOKER_SHARED_DIR (optional): the shared folder with topologies/; without it the
# what-if plan on the POWER8 XML is skipped (said on stdout).
# Exit status: 0 passed; 1 a check failed (the command's output is printed).
set -euo pipefail

[ $# -eq 2 ] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
build=$(cd "$1" && pwd -P)
work=$(realpath -m "$2")
src=$(cd "$(dirname "$0")/../../.." && pwd -P)
rm -rf "$work"
mkdir -p "$work"
stoker=$build/runtime/stoker
make_data=$build/runtime/examples/stoker_make_data
profiles=$src/sbatch_templates/admin/stoker.conf
failures=0

# check NAME REGEX COMMAND...: COMMAND exits 0 and some line of its output matches REGEX.
check() {
  local name=$1 regex=$2 rc=0
  shift 2
  "$@" >"$work/$name.txt" 2>&1 || rc=$?
  if [ $rc != 0 ] || ! grep -qE -- "$regex" "$work/$name.txt"; then
    echo "FAIL [$name] (exit $rc, /$regex/): $*"
    tail -n 30 "$work/$name.txt"
    failures=$((failures + 1))
  else
    echo "ok   [$name] $*"
  fi
}

"$make_data" images "$work/images" --classes 4 --per-class 32 --width 64 --height 48 >/dev/null

# user guide: reading `stoker plan` (also run by the demo) and a what-if on a GPU node.
check plan '^  workers +[0-9]+' "$stoker" plan --profiles "$profiles" --profile cv
xml=${STOKER_SHARED_DIR:-}/topologies/power8gpudistances.xml
if [ -f "$xml" ]; then
  cp "$xml" "$work/power8gpudistances.xml"
  (cd "$work" && check plan_whatif 'cpus +its GPU is near NUMA node 1' "$stoker" plan \
    --topology power8gpudistances.xml --gpus 0,1,2,3 --local-rank 2 --local-size 4 \
    --profile cv --mem-limit 64G)
else
  echo "skip [plan_whatif] no ${xml}: set STOKER_SHARED_DIR"
fi

# user guide: reading `stoker bench`.
check bench '^  throughput [0-9]+ samples/s' "$stoker" bench images "$work/images" \
  --batch-size 32 --size 64 --epochs 2

# user guide: which samples rank 3 of 4 sees in epoch 2 after resuming at position 500.
check sampler '"indices": \[5, 104, 570, 229, 433\]' "$stoker" sampler --size 1000 --seed 7 \
  --epoch 2 --world-size 4 --rank 3 --resume-at 500 --json --limit 5

# admin guide: a node's XML for topology_xml=, then planning from it.
check lstopo '<topology' sh -c 'lstopo-no-graphics --of xml "$1" && cat "$1"' lstopo "$work/node.xml"
check plan_xml "source: computed on .*node.xml" "$stoker" plan --topology "$work/node.xml" \
  --profiles "$profiles" --profile cv

# admin guide: `stoker doctor --dataset DIR`; exit 1 means an error finding on this host,
# which is the tool working: accept 0 or 1 when the summary line is there.
doctor_rc=0
"$stoker" doctor --dataset "$work/images" >"$work/doctor.txt" 2>&1 || doctor_rc=$?
if [ $doctor_rc -le 1 ] && grep -qE '^[0-9]+ checks: ' "$work/doctor.txt"; then
  echo "ok   [doctor] stoker doctor --dataset (exit $doctor_rc)"
else
  echo "FAIL [doctor] exit $doctor_rc"; cat "$work/doctor.txt"; failures=$((failures + 1))
fi

# admin guide: `cmake --install build` (into a scratch DESTDIR, so nothing on this host changes).
check install 'Installing: .*spank_stoker.so|Up-to-date: .*spank_stoker.so|Installing: .*bin/stoker' \
  env DESTDIR="$work/destdir" cmake --install "$build"

# user guide: the two Python ways in.
if [ -d "$build/python/stoker" ]; then
  cat >"$work/way1.py" <<'EOF'
import stoker, torch
class Squares(torch.utils.data.Dataset):
    def __len__(self): return 64
    def __getitem__(self, i): return torch.tensor([float(i * i)])
dataset = Squares()
plan = stoker.plan()
print(plan)
loader = torch.utils.data.DataLoader(dataset, batch_size=8, **plan.torch_dataloader_kwargs())
print("batches", sum(1 for _ in loader))
EOF
  cat >"$work/way2.py" <<EOF
import stoker
loader = stoker.Loader.images("$work/images", batch_size=16, size=32)
for epoch in range(2):
    loader.set_epoch(epoch)
    n = 0
    for images, labels in loader:
        n += images.shape[0]
    print("epoch", epoch, "samples", n, "shape", tuple(images.shape))
state = loader.state_dict()
print(loader.stats())
EOF
  check python_way1 '^batches 8$' env PYTHONPATH="$build/python" "${PYTHON:-/usr/bin/python3}" "$work/way1.py"
  check python_way2 '^epoch 1 samples 128 shape \(16, 3, 32, 32\)' \
    env PYTHONPATH="$build/python" "${PYTHON:-/usr/bin/python3}" "$work/way2.py"
else
  echo "skip [python] $build/python/stoker not built (target stoker_python)"
fi

if [ $failures -gt 0 ]; then
  echo "docs_commands: $failures check(s) failed"
  exit 1
fi
echo "docs_commands: all passed"
