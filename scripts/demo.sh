#!/usr/bin/env bash
# stoker in one command: a local two-node Slurm cluster with stoker's plugin, a real
# multi-node training job, each rank's plan, and the throughput with stoker on and off.
#
#   scripts/demo.sh [--keep] [--dir DIR]      (as root, or a sudoer: it asks sudo itself)
#   scripts/demo.sh --report [--dir DIR]      each rank's plan again, from an earlier run
#
#   --keep     leave the cluster running afterwards and print how to use and stop it
#   --dir DIR  the demo's folder (default /var/tmp/stoker-demo): cluster, binaries, data,
#              job output and the log. Not under /tmp: emulated node n2 has a private /tmp.
#   --report   print the plans of the run in DIR (DIR/jobs/on.err and on.out) and its
#              `stoker report` (DIR/jobs.jsonl, DIR/report.html) and stop
#
# Phases: install the Debian packages (scripts/install-deps.sh), build stoker, the SPANK
# plugin and the example trainer into build/, start the cluster (scripts/local-cluster.sh)
# with the plugin and the example profiles (sbatch_templates/admin/stoker.conf), make a
# small JPEG dataset, submit sbatch_templates/multi_node.sbatch with stoker on, then the
# same job with --stoker=off, print the results, stop the cluster; last, `stoker report` over
# the three jobs' run records (the plugin's job_log) and where its HTML page is.
# Safe to run again: a cluster left by --keep in DIR is stopped and started afresh.
# Everything the phases print goes to DIR/demo.log; a failed phase prints its tail.
set -euo pipefail
export PATH=/usr/sbin:/sbin:$PATH

. "$(dirname "$0")/as-root.sh"
as_root demo "it installs Debian packages and starts Slurm daemons" "$@"
src=$(cd "$(dirname "$0")/.." && pwd -P)
keep=0
report=0
dir=/var/tmp/stoker-demo
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --keep) keep=1; shift ;;
    --report) report=1; shift ;;
    --dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "demo: unknown argument '$1'" >&2; usage ;;
  esac
done
dir=$(realpath -m "$dir")
case "$dir/" in
  /tmp/*) echo "demo: --dir $dir: use a folder outside /tmp (node n2 sees a private /tmp)" >&2; exit 1 ;;
esac
log=$dir/demo.log
[ $report = 1 ] || { mkdir -p "$dir"; : >"$log"; }

build=$src/build
bin=$dir/bin
cluster=$dir/cluster
jobs=$dir/jobs
joblog=$dir/jobs.jsonl  # the plugin's job_log: one run record line per rank
report_html=$dir/report.html
data=$dir/data/images
# The dataset: 4 colour classes of 64x48 JPEGs, learnable in a few epochs.
classes=4 per_class=256 epochs=3 batch=32
job_timeout=${STOKER_DEMO_JOB_TIMEOUT:-300}

# ---- phases ---------------------------------------------------------------------------
total=7
n=0
# phase LABEL FUNCTION: runs FUNCTION with errexit, its output to the log; one line per phase.
phase() {
  local label=$1 started rc=0
  shift
  n=$((n + 1))
  started=$(date +%s)
  printf '[%d/%d] %s ... ' "$n" "$total" "$label"
  echo "==== [$n/$total] $label ($(date '+%F %T'))" >>"$log"
  # A background subshell keeps errexit on inside the function (an `if` would turn it off).
  (set -e; "$@") >>"$log" 2>&1 &
  wait $! || rc=$?
  if [ $rc != 0 ]; then
    echo "FAILED (exit $rc, $(($(date +%s) - started)) s)"
    echo "---- last lines of $log:"
    tail -n 25 "$log"
    echo "---- full log: $log"
    [ -f "$cluster/slurm.conf" ] && [ $keep = 0 ] &&
      "$src/scripts/local-cluster.sh" stop "$cluster" >>"$log" 2>&1
    exit 1
  fi
  echo "done ($(($(date +%s) - started)) s)"
}

install_deps() { "$src/scripts/install-deps.sh"; }

# Same configuration as scripts/test.sh, so the two share build/; only the demo's targets.
build_targets() {
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cmake --build "$build" -j"$(nproc)" --target stoker spank_stoker stoker_train stoker_make_data
}

# Copies a file by rename, so a process that has the old one mapped keeps a valid copy.
put() {
  cp "$1" "$2.new"
  mv -f "$2.new" "$2"
}

start_cluster() {
  # A cluster left running by an earlier --keep: stop it before its plugin is replaced.
  if [ -f "$cluster/slurm.conf" ]; then "$src/scripts/local-cluster.sh" stop "$cluster"; fi
  mkdir -p "$bin" "$dir/etc"
  put "$build/runtime/stoker" "$bin/stoker"
  put "$build/spank_plugin/spank_stoker.so" "$bin/spank_stoker.so"
  put "$build/runtime/examples/stoker_train" "$bin/stoker_train"
  put "$build/runtime/examples/stoker_make_data" "$bin/stoker_make_data"
  put "$src/sbatch_templates/admin/stoker.conf" "$dir/etc/stoker.conf"
  rm -f "$joblog"  # the report covers this run's three jobs
  "$src/scripts/local-cluster.sh" start "$cluster" --plugin "$bin/spank_stoker.so" \
    --plugin-args "profiles=$dir/etc/stoker.conf enable=opt-in job_log=$joblog record_root=$dir/records"
  export SLURM_CONF=$cluster/slurm.conf
  sinfo -N
}

make_dataset() {
  rm -rf "$data"
  "$bin/stoker_make_data" images "$data" --classes $classes --per-class $per_class \
    --width 64 --height 48
  # What the admin previews for such a job: the same planner the plugin runs.
  "$bin/stoker" plan --profiles "$dir/etc/stoker.conf" --profile cv
}

# run_job NAME [sbatch options...]: the multi-node template to its end; output in jobs/NAME.*
run_job() {
  local name=$1
  shift
  mkdir -p "$jobs"
  rm -f "$jobs/$name".{out,err}
  cd "$jobs"
  export SLURM_CONF=$cluster/slurm.conf STOKER_TRAIN=$bin/stoker_train DATA=$data \
    EPOCHS=$epochs BATCH_SIZE=$batch
  set -a
  . "$src/scripts/mpi-loopback.env"  # Open MPI: TCP over the loopback only
  set +a
  . "$src/scripts/open-mpi-race.sh"
  # The cluster's GPUs are fake (character devices): no NVIDIA GPU stands behind them, so
  # the plugin would leave GPU tasks untuned. The demo asks for none; the plan then splits
  # each node's cores between its ranks.
  local rc attempt
  for attempt in 1 2; do
    rc=0
    timeout "$job_timeout" sbatch --wait --gpus-per-node=0 -o "$jobs/$name.out" -e "$jobs/$name.err" \
      "$@" "$src/sbatch_templates/multi_node.sbatch" || rc=$?
    # A job Open MPI's own TCP wire-up race killed before stoker ran is run once more.
    [ $rc != 0 ] && [ $attempt = 1 ] && open_mpi_race_in "$jobs/$name.err" "$jobs/$name.out" || break
    echo "job $name: $open_mpi_race_note; running it once more"
  done
  if [ $rc != 0 ]; then
    echo "job $name: sbatch --wait exited $rc (124: over ${job_timeout} s)"
    scancel --name=stoker-multinode 2>/dev/null || true
    tail -n 30 "$jobs/$name.out" "$jobs/$name.err" 2>/dev/null || true
    return 1
  fi
  grep -H '' "$jobs/$name.out" "$jobs/$name.err"
  grep -q '^stoker_train: done: ' "$jobs/$name.out"
}

# --stoker-verbose is on the template's srun line already.
run_on() { run_job on --stoker-profile=cv; }
# Stoker off, twice: the trainer alone (it then plans in-process from its own mask), and
# the loader setting users often copy (8 workers, prefetch_factor 2 each = 16 batches).
run_off() {
  run_job off --stoker=off
  TRAIN_ARGS="--workers 8 --prefetch 16" run_job copied --stoker=off
}

stop_cluster() { "$src/scripts/local-cluster.sh" stop "$cluster"; }

# ---- the report -------------------------------------------------------------------------
# One block per rank from the plugin's --stoker-verbose line and the trainer's own line.
print_plans() {
  local err=$jobs/on.err out=$jobs/on.out
  echo
  echo "Each rank's plan, from stoker's SPANK plugin (--stoker-verbose, in $err):"
  # The batch script's own step is not tuned (batch_step=no): only the srun step's ranks count.
  grep -E '^stoker: (warning: )?rank [0-9]+' "$err" | grep -v 'batch/interactive steps are not tuned' |
    sort -s -t' ' -k3,3n | while IFS= read -r line; do
    local rank host
    rank=$(sed -nE 's/^stoker: (warning: )?rank ([0-9]+).*/\2/p' <<<"$line")
    host=$(sed -nE "s/^stoker_train: rank $rank\/[0-9]+ \(local [0-9]+\/[0-9]+, host ([^,]+),.*/\1/p" "$out" | head -n 1)
    # Besides its plan line a tuned rank prints the reasons that did not fit on it
    # ("rank N (more reasons): ...") and what planning cost ("rank N: task_init took ...").
    case $line in
      *"(more reasons): "*) echo "      more reasons: ${line#*(more reasons): }"; continue ;;
      *": task_init took "*) echo "      cost: task_init took ${line#*: task_init took }"; continue ;;
    esac
    if [[ $line != *" profile="* ]]; then
      echo "  rank $rank (${host:-?}): untuned: ${line#*: }"
      continue
    fi
    awk -v rank="$rank" -v host="${host:-?}" '
      function field(k,   m) { return match($0, " " k "=[^ ;]+") ? substr($0, RSTART + length(k) + 2, RLENGTH - length(k) - 2) : "?" }
      {
        printf "  rank %s (node %s, %s): cpus %s, NUMA %s, workers %s on cpus %s, prefetch %s batches, memory budget %.1f GiB, pinned %s\n",
          rank, host, substr($0, index($0, "(local ") + 1, index($0, "):") - index($0, "(local ") - 1),
          field("cpus"), numa(), field("workers"), field("worker_cpus"), field("prefetch"),
          field("mem_budget") / 1073741824, field("pin_memory")
        b = index($0, "; binding: "); r = index($0, "; reasons: ")
        if (b) printf "      binding: %s\n", substr($0, b + 11, r - b - 11)
        n = split(substr($0, r + 11), why, ";")
        for (i = 1; i <= n; i++) {
          sub(/^ +/, "", why[i])
          if (why[i] ~ /^(cpus|workers|prefetch|mem_budget|numa):/) printf "      why %s\n", why[i]
        }
      }
      function numa(   s) {
        if (!match($0, "numa: [^;]*")) return "?"
        s = substr($0, RSTART, RLENGTH)
        return match(s, /, [0-9][0-9,-]*/) ? substr(s, RSTART + 2, RLENGTH - 2) : "?"
      }' <<<"$line"
  done
}

# done_field FILE WHAT: a figure from the trainer's done line.
done_field() {
  local line
  line=$(grep -h '^stoker_train: done: ' "$1" | tail -n 1)
  case $2 in
    rate) sed -nE 's/.* = ([0-9.]+) samples\/s.*/\1/p' <<<"$line" ;;
    wait) sed -nE 's/.*input wait ([0-9.]+)%.*/\1/p' <<<"$line" ;;
    secs) sed -nE 's/.* samples in ([0-9.]+) s .*/\1/p' <<<"$line" ;;
  esac
}

print_throughput() {
  local ranks
  ranks=$(grep -cE '^stoker_train: rank [0-9]+/[0-9]+ \(local' "$jobs/on.out")
  echo
  echo "Throughput of the whole job ($ranks ranks on 2 nodes, $epochs epochs of $((classes * per_class)) images, batch $batch per rank):"
  printf '  %-52s %10s %12s %9s\n' "run" "samples/s" "input wait" "time"
  local name label
  for name in on off copied; do
    case $name in
      on) label="stoker on  (--stoker-profile=cv: the plugin's plan)" ;;
      off) label="stoker off (--stoker=off: trainer plans in-process)" ;;
      copied) label="stoker off, copied setting: 8 workers, prefetch 16" ;;
    esac
    printf '  %-52s %10s %11s%% %7s s\n' "$label" "$(done_field "$jobs/$name.out" rate)" \
      "$(done_field "$jobs/$name.out" wait)" "$(done_field "$jobs/$name.out" secs)"
  done
  echo "  (This host has $(nproc) cores, shared by both emulated nodes and every rank: the"
  echo "   figures measure this machine under its current load, not a GPU node.)"
}

# What an admin sees of the three jobs: `stoker report` over the plugin's job log.
print_report() {
  echo
  echo "Which jobs starve their GPUs: stoker report --log $joblog"
  "$bin/stoker" report --log "$joblog" --html "$report_html" | sed 's/^/  /'
  echo "  (open $report_html in a browser: a plot of each job's wait share and depth over"
  echo "   time, and the node picture of its plan)"
}

print_keep() {
  cat <<EOF

The cluster is still running (--keep), with stoker's plugin (enable=opt-in) and the
example profiles ($dir/etc/stoker.conf). Use it from a shell:
  export SLURM_CONF=$cluster/slurm.conf
  sinfo -N
  cd $jobs && sbatch --wait --gpus-per-node=0 --stoker-profile=cv $src/sbatch_templates/multi_node.sbatch
  (the job reads STOKER_TRAIN=$bin/stoker_train and DATA=$data from your environment,
   and Open MPI needs OMPI_MCA_btl=tcp,self OMPI_MCA_pml=ob1 between the emulated nodes)
Stop it with (as root):
  $src/scripts/local-cluster.sh stop $cluster
EOF
}

if [ $report = 1 ]; then
  [ -f "$jobs/on.err" ] || { echo "demo: --report: no earlier run in $dir ($jobs/on.err)" >&2; exit 1; }
  print_plans
  [ -f "$joblog" ] && print_report
  exit 0
fi
echo "stoker demo in $dir (log: $log)"
phase "installing dependencies (scripts/install-deps.sh)" install_deps
phase "building stoker, the SPANK plugin and the trainer (build/)" build_targets
phase "starting the local two-node Slurm cluster with stoker's plugin" start_cluster
phase "making a small dataset ($((classes * per_class)) JPEG images)" make_dataset
phase "running sbatch_templates/multi_node.sbatch with stoker on" run_on
phase "running the same job with --stoker=off" run_off
if [ $keep = 1 ]; then
  n=$((n + 1))
  echo "[$n/$total] leaving the cluster running (--keep) ... done"
else
  phase "stopping the cluster" stop_cluster
fi
print_plans
print_throughput
print_report
[ $keep = 1 ] && print_keep
echo
echo "Job output: $jobs/{on,off,copied}.{out,err}; job log: $joblog; HTML report: $report_html;"
echo "full log: $log"
