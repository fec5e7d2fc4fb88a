#!/usr/bin/env bash
# How long `stoker report` takes over a large job log: generates LINES lines (default 10^6)
# as the plugin writes them (tests/support/make_job_log.py: 8 ranks per job step, a 48-point
# timeline each, ~1.5 KB a line), then times `stoker report` over them (text, and --html for
# the top 20 steps).
#
#   benchmarks/report_log.sh [STOKER] [LINES] [DIR]
#     STOKER  the stoker command (default build/runtime/stoker)
#     DIR     where the log goes (default a temporary folder, removed afterwards)
# The issue's budget: 10^6 lines in under 5 s.
set -euo pipefail
stoker=${1:-build/runtime/stoker}
lines=${2:-1000000}
dir=${3:-$(mktemp -d)}
[ -n "${3:-}" ] || trap 'rm -rf "$dir"' EXIT
log=$dir/jobs.jsonl
python3 "$(dirname "$0")/../tests/support/make_job_log.py" "$log" "$lines"
echo "log: $(wc -l <"$log") lines, $(du -h "$log" | cut -f1)"
for args in "" "--html $dir/report.html"; do
  start=$(date +%s.%N)
  "$stoker" report --log "$log" $args >/dev/null
  end=$(date +%s.%N)
  printf 'stoker report %-28s %.2f s\n' "$args" "$(echo "$end - $start" | bc)"
done
