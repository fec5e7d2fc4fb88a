#!/usr/bin/env bash
# Runs one MPI sampler check through a launcher, so the same check runs under mpirun
# (label mpi) and under Slurm (label cluster):
#   run_sampler_check.sh CHECK BIN_DIR LAUNCHER...
# CHECK: coverage | drop_last | block | stream | resume:W1,W2 | stream_resume:W1,W2 | mismatch
#        | absent   (stream: uneven shards read as streams, mpi_sampler_ranks --stream)
# BIN_DIR: the folder holding mpi_sampler_ranks and mpi_sampler_verify.
# LAUNCHER: the command that starts the ranks; the word {n} in it is replaced by the
# number of ranks, e.g.
#   mpirun --allow-run-as-root --oversubscribe -np {n}
#   srun -N2 -n{n} --mpi=pmix        (with OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self)
# Outputs go to $STOKER_MPI_WORKDIR (default BIN_DIR/mpi-work): under the emulated Slurm
# nodes /tmp is private to each node, so keep it on a shared path.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 CHECK BIN_DIR LAUNCHER..." >&2; exit 2; }
check=$1 bin=$2
shift 2
launcher=("$@")
size=${STOKER_MPI_SIZE:-1001}
work=${STOKER_MPI_WORKDIR:-$bin/mpi-work}/${check//[:,]/_}.$$
rm -rf "$work" && mkdir -p "$work"

# launch N ARGS...: the launcher with {n} set to N, then mpi_sampler_ranks ARGS... (through
# mpi_launch.sh, which repeats a launch that Open MPI's TCP wire-up crashed)
launch() {
  local n=$1
  shift
  "$(dirname "$0")/../support/mpi_launch.sh" timeout 30 "${launcher[@]//\{n\}/$n}" \
    "$bin/mpi_sampler_ranks" "$@"
}

case $check in
  coverage | drop_last | block | stream)
    extra=() ranks=4
    [ "$check" = drop_last ] && extra=(--drop-last)
    [ "$check" = block ] && extra=(--block 10)
    [ "$check" = stream ] && extra=(--stream) ranks=3
    launch "$ranks" --out "$work" --size "$size" --epoch 3 "${extra[@]}"
    "$bin/mpi_sampler_verify" "$size" "$work"
    ;;
  resume:* | stream_resume:*)
    IFS=, read -r w1 w2 <<<"${check#*resume:}"
    extra=()
    [ "${check%%:*}" = stream_resume ] && extra=(--stream)
    mkdir -p "$work/1" "$work/2"
    launch "$w1" --out "$work/1" --size "$size" --epoch 2 --consume 100 "${extra[@]}"
    launch "$w2" --out "$work/2" --size "$size" --epoch 2 --state-in "$work/1/state-0.txt" \
      "${extra[@]}"
    "$bin/mpi_sampler_verify" "$size" "$work/1" "$work/2"
    ;;
  mismatch)
    # Rank 3 sees one sample fewer: every rank must stop with the same clear error, fast.
    t0=$(date +%s%N)
    rc=0
    STOKER_AGREE_TIMEOUT=15 launch 4 --out "$work" --size "$size" --bad-rank 3 || rc=$?
    elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
    echo "launcher exit status $rc after $elapsed_ms ms"
    [ "$rc" -ne 0 ] || { echo "FAIL: the launcher succeeded"; exit 1; }
    [ "$elapsed_ms" -lt 20000 ] || { echo "FAIL: took $elapsed_ms ms (limit 20000)"; exit 1; }
    want="agree_on_epoch: ranks disagree on the dataset: ranks 0-2 have dataset size $size"
    for r in 0 1 2 3; do
      f=$work/error-$r.txt
      [ -f "$f" ] || { echo "FAIL: rank $r reported no error"; exit 1; }
      grep -qF "$want" "$f" || { echo "FAIL: rank $r said: $(cat "$f")"; exit 1; }
      grep -qF "rank 3 has dataset size $((size - 1))" "$f" || { echo "FAIL: rank $r: $(cat "$f")"; exit 1; }
    done
    echo "every rank stopped with: $(cat "$work/error-0.txt")"
    echo OK
    ;;
  absent)
    # Rank 3 never joins the agreement: the others must give up and abort the job.
    t0=$(date +%s%N)
    rc=0
    STOKER_AGREE_TIMEOUT=3 launch 4 --out "$work" --size "$size" --absent-rank 3 \
      >"$work/log" 2>&1 || rc=$?
    elapsed_ms=$((($(date +%s%N) - t0) / 1000000))
    cat "$work/log"
    echo "launcher exit status $rc after $elapsed_ms ms"
    [ "$rc" -ne 0 ] || { echo "FAIL: the launcher succeeded"; exit 1; }
    [ "$elapsed_ms" -lt 20000 ] || { echo "FAIL: took $elapsed_ms ms (limit 20000)"; exit 1; }
    grep -qF "agree_on_epoch: not every rank arrived within 3 s" "$work/log" ||
      { echo "FAIL: no rank said why it aborted"; exit 1; }
    echo OK
    ;;
  *)
    echo "unknown check '$check'" >&2
    exit 2
    ;;
esac
rm -rf "$work"
