#!/usr/bin/env bash
# The runtime's MPI faults on the local cluster's two emulated nodes (label cluster, faults).
#   runtime_mpi_faults.sh CLUSTER_DIR PYTHONPATH pmix-choice
#     Under MpiDefault=pmix (every task has PMIX_RANK, as at a site that sets it), a plain
#     Python process with a stoker.Loader.tokens must not map libmpi, nor one with torchrun's
#     variables; one with STOKER_MPI=1 must, and its ranks agree over MPI. Used to: every one
#     loaded libmpi and called MPI_Init_thread.
#   runtime_mpi_faults.sh CLUSTER_DIR PYTHONPATH node-copy
#     An image folder staged per node (each node's /tmp: n2's is private) whose copy on n2
#     differs in one file: every rank stops with an error naming n2 and the file, none hangs.
#     Used to: rank 0's fingerprint was copied to every rank and the job ran on n2's files.
set -uo pipefail
cluster=$1 pythonpath=$2 mode=$3
src=$(cd "$(dirname "$0")/../.." && pwd -P)
[ -f "$cluster/skip-reason" ] && { echo "SKIP: $(cat "$cluster/skip-reason")"; exit 77; }
python=${STOKER_TEST_PYTHON:-python3}
work=$(mktemp -d /var/tmp/stoker-runtime-mpi.XXXXXX)  # seen by both nodes (n2's /tmp is private)
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
run() { "$src/tests/cluster/with_cluster.sh" "$cluster" timeout 120 "$@"; }

case $mode in
pmix-choice)
  trap '"$src/scripts/local-cluster.sh" mpi-default "$cluster" none >/dev/null; rm -rf "$work"' EXIT
  head -c 4096 /dev/urandom >"$work/tokens.bin"
  cat >"$work/probe.py" <<'PY'
import os, sys
import stoker
loader = stoker.Loader.tokens(sys.argv[1], seq_len=16, batch_size=4, as_numpy=True)
batches = sum(1 for _ in loader)
maps = open("/proc/self/maps").read()
print(f"rank {os.environ['SLURM_PROCID']} pmix={'PMIX_RANK' in os.environ} "
      f"libmpi={'/libmpi.so' in maps} batches={batches} "
      f"agreement={loader.stats()['agreement']}", flush=True)
PY
  "$src/scripts/local-cluster.sh" mpi-default "$cluster" pmix
  probe=(env "PYTHONPATH=$pythonpath" "$python" "$work/probe.py" "$work/tokens.bin")
  plain=$(run srun -N2 -n2 "${probe[@]}" 2>&1)
  echo "$plain"
  check "MpiDefault=pmix gives every task PMIX_RANK" '[ "$(grep -c "pmix=True" <<<"$plain")" = 2 ]'
  check "no plain rank maps libmpi" '[ "$(grep -c "pmix=True libmpi=False" <<<"$plain")" = 2 ]'
  # torchrun's worker (as if mpirun had started torchrun, too): its own variables.
  torchrun=(TORCHELASTIC_RUN_ID=job RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1
            OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0)
  torch=$(run srun -N1 -n1 env "${torchrun[@]}" "${probe[@]}" 2>&1)
  echo "$torch"
  check "a torchrun worker maps no libmpi" 'grep -q "pmix=True libmpi=False" <<<"$torch"'
  asked=$(run "$src/tests/support/mpi_launch.sh" srun -N2 -n2 env STOKER_MPI=1 "${probe[@]}" 2>&1)
  echo "$asked"
  check "STOKER_MPI=1 maps libmpi on both ranks" '[ "$(grep -c "libmpi=True" <<<"$asked")" = 2 ]'
  check "and they agree over MPI" '[ "$(grep -c "agreement=MPI" <<<"$asked")" = 2 ]'
  "$src/scripts/local-cluster.sh" mpi-default "$cluster" none
  explicit=$(run srun -N1 -n1 --mpi=pmix "${probe[@]}" 2>&1)
  echo "$explicit"
  check "srun --mpi=pmix alone maps no libmpi" 'grep -q "pmix=True libmpi=False" <<<"$explicit"'
  ;;
node-copy)
  name=stoker-node-copy.$$
  n1=/tmp/$name n2=$cluster/n2-tmp/$name  # n2's /tmp is $cluster/n2-tmp (local-cluster.sh)
  trap 'rm -rf "$work" "$n1" "$n2"' EXIT
  for root in "$n1" "$n2"; do
    "$python" - "$root" <<'PY'
import os, sys
from PIL import Image
for cls, name, colour in (("c0", "a", (200, 30, 30)), ("c1", "b", (30, 200, 30))):
    os.makedirs(os.path.join(sys.argv[1], cls), exist_ok=True)
    Image.new("RGB", (32, 32), colour).save(os.path.join(sys.argv[1], cls, name + ".jpg"))
PY
  done
  cat >"$work/probe.py" <<'PY'
import os, sys
import stoker
try:
    loader = stoker.Loader.images(sys.argv[1], batch_size=1, size=16, resize_shorter=16)
    batches = sum(1 for _ in loader)
    print(f"rank {os.environ['SLURM_PROCID']} opened: {batches} batches", flush=True)
except stoker.Error as e:
    print(f"rank {os.environ['SLURM_PROCID']} error: {e}", flush=True)
    sys.exit(3)
PY
  probe=(env "PYTHONPATH=$pythonpath" STOKER_MPI=1 STOKER_CACHE_DIR=none "$python"
         "$work/probe.py" "/tmp/$name")
  same=$(run "$src/tests/support/mpi_launch.sh" srun -N2 -n2 --mpi=pmix "${probe[@]}" 2>&1)
  echo "$same"
  check "the same copy on both nodes opens on both ranks" \
    '[ "$(grep -c "^rank [01] opened" <<<"$same")" = 2 ]'
  "$python" -c 'import sys; from PIL import Image; Image.new("RGB", (32, 32), (0, 0, 250)).save(sys.argv[1])' \
    "$n2/c1/b.jpg"  # another image: only n2's copy
  differs=$(run "$src/tests/support/mpi_launch.sh" srun -N2 -n2 --mpi=pmix "${probe[@]}" 2>&1)
  echo "$differs"
  line="the copy on n2 is not rank 0's: /tmp/$name/c1/b.jpg: differs in size or content"
  check "both ranks stop, naming n2 and the file" \
    '[ "$(grep -c "^rank [01] error: .*$line" <<<"$differs")" = 2 ]'
  ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
