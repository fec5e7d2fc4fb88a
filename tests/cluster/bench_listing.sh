#!/usr/bin/env bash
# `stoker bench images` across the two emulated nodes under srun --mpi=pmix (label cluster):
# the image folder is listed once for the job. Rank 0 lists it (every class folder, and the
# content sample); rank 1 takes rank 0's listing over MPI: strace finds no stat of an image file
# and no class folder opened in rank 1. Its only look at the folder is the root's names (is it
# an image folder or shards?). Being the first rank on its node, it reads the node's own copy of
# the content sample (at most 1,024 files, to find a staged copy that differs from rank 0's),
# and the images of its own batches; a second rank on the node would read only the latter.
# Before the bench opened datasets through the one owner (open_dataset), every rank listed it.
#   bench_listing.sh CLUSTER_DIR STOKER
set -uo pipefail
cluster=$1 stoker=$2
src=$(cd "$(dirname "$0")/../.." && pwd -P)
[ -f "$cluster/skip-reason" ] && { echo "SKIP: $(cat "$cluster/skip-reason")"; exit 77; }
command -v strace >/dev/null || { echo "SKIP: strace is not installed"; exit 77; }
work=$(mktemp -d /var/tmp/stoker-bench-listing.XXXXXX)  # both nodes see it (n2's /tmp is private)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

# 8 classes x 150 images: more than the content sample's 1,024 files, so rank 0's opens are
# more than any single rank's batches would read.
/usr/bin/python3 - "$work/data" <<'PY'
import os, sys
from PIL import Image
root = sys.argv[1]
for c in range(8):
    os.makedirs(f"{root}/c{c}")
    Image.new("RGB", (16, 16), (c * 30, 0, 0)).save(f"{root}/c{c}/000.jpg")
    for i in range(1, 150):
        os.link(f"{root}/c{c}/000.jpg", f"{root}/c{c}/{i:03d}.jpg")
PY
cat >"$work/traced.sh" <<SH
#!/bin/sh
exec strace -f -qq -e trace=stat,lstat,newfstatat,statx,openat -o "$work/trace.\$SLURM_PROCID" \
  "$stoker" bench images "$work/data" --size 8 --batch-size 4 --batches 2 --epochs 1 \
  --workers 1 --prefetch 1 --json
SH
chmod +x "$work/traced.sh"
out=$("$src/tests/cluster/with_cluster.sh" "$cluster" timeout 180 \
  "$src/tests/support/mpi_launch.sh" srun --mpi=pmix -N2 -n2 "$work/traced.sh" 2>&1)
echo "$out" | tail -n 5
check "both ranks ran the bench" '[ "$(grep -c "\"samples_per_s\"" <<<"$out")" = 2 ]'
images() { grep -cE "\"$work/data/c[0-9]/[0-9]+\.jpg\"" "$1"; }
stats() { grep -E "^[0-9]+ +(stat|lstat|newfstatat|statx)\(" "$1" | grep -cE "\"$work/data/c[0-9]/"; }
folders() { grep -E "openat\(.*O_DIRECTORY" "$1" | grep -cE "\"$work/data/c[0-9]\""; }
if [ -f "$work/trace.0" ] && [ -f "$work/trace.1" ]; then
  echo "rank 0: $(images "$work/trace.0") image names in calls, $(folders "$work/trace.0") folders opened"
  echo "rank 1: $(images "$work/trace.1") image names in calls, $(stats "$work/trace.1") stats, $(folders "$work/trace.1") folders opened"
  check "rank 0 lists the folder" '[ "$(folders "$work/trace.0")" = 8 ]'
  check "rank 1 opens no class folder" '[ "$(folders "$work/trace.1")" = 0 ]'
  check "rank 1 stats no image file" '[ "$(stats "$work/trace.1")" = 0 ]'
  # The node's content sample (1,024 files) and its own batches: 2 batches of 4, prefetched
  # ahead by a ring of at most 10 slots.
  check "rank 1 opens only the sample and what its batches read" '[ "$(images "$work/trace.1")" -le 1104 ]'
else
  check "both ranks left a trace" false
fi
[ $fails = 0 ]
