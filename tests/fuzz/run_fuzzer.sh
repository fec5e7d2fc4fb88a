#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS from its seed corpus, niced (the machine may be
# shared), and prints one summary line: executions, coverage, and the corpus it grew.
#   run_fuzzer.sh FUZZ_BIN FUZZ_SOURCE_DIR WORK_DIR SECONDS [libFuzzer options...]
# Writes only under WORK_DIR/NAME/ (the grown corpus, crash inputs, the target's $TMPDIR).
# Exit status: libFuzzer's (non-zero on a crash, leak, UB report or timeout).
set -euo pipefail
bin=$1 src=$2 work=$3 seconds=$4
shift 4
name=$(basename "$bin")
name=${name#fuzz_}
dir="$work/$name"
mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/tmp"
args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$dir/artifacts/")
[ -f "$src/dictionaries/$name.dict" ] && args+=(-dict="$src/dictionaries/$name.dict")
log="$dir/last.log"
status=0
# The grown corpus first (libFuzzer adds to the first folder only), the committed seeds second.
LSAN_OPTIONS="suppressions=$src/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" TMPDIR="$dir/tmp" nice -n 19 "$bin" "${args[@]}" "$@" "$dir/corpus" "$src/corpus/$name" \
  >"$log" 2>&1 || status=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n1 | cut -d' ' -f2)
ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n1 | cut -d' ' -f2)
echo "fuzz $name: ${runs:-?} executions in ${seconds}s, coverage ${cov:-?} edges, ${ft:-?} features, corpus $(ls "$dir/corpus" | wc -l) grown + $(ls "$src/corpus/$name" | wc -l) seeds"
if [ "$status" -ne 0 ]; then
  tail -n 60 "$log"
  echo "fuzz $name: FAILED (status $status); the input is in $dir/artifacts/" >&2
fi
exit "$status"
