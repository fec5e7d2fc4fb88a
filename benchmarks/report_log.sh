#!/usr/bin/env bash
# How long `stoker report` takes over a large job log: generates LINES lines (default 10^6)
# as the plugin writes them (tests/support/make_job_log.py: 8 ranks per job step, a 48-point
# timeline each, ~1.5 KB a line), then times `stoker report` over them (text, and --html for
# the top 20 steps) with /usr/bin/time: wall seconds, CPU seconds (user + system), peak memory.
#
#   benchmarks/report_log.sh [STOKER[,STOKER...]] [LINES] [DIR] [ROUNDS]
#     STOKER  the stoker command (default build/runtime/stoker); several, comma-separated, are
#             alternated (A B, then B A, ...) ROUNDS times (default 1), so that two builds are
#             compared in one run on the same log and the same page cache
#     DIR     where the log goes (default a temporary folder, removed afterwards)
# The budget: 10^6 lines in under 5 s.
set -euo pipefail
IFS=, read -r -a builds <<<"${1:-build/runtime/stoker}"
lines=${2:-1000000}
dir=${3:-$(mktemp -d)}
rounds=${4:-1}
[ -n "${3:-}" ] || trap 'rm -rf "$dir"' EXIT
log=$dir/jobs.jsonl
[ -s "$log" ] && [ "$(wc -l <"$log")" = "$lines" ] ||
  python3 "$(dirname "$0")/../tests/support/make_job_log.py" "$log" "$lines"
echo "log: $(wc -l <"$log") lines, $(du -h "$log" | cut -f1)"
cat "$log" >/dev/null  # into the page cache before the first timing
for ((round = 0; round < rounds; round++)); do
  order=("${builds[@]}")
  if ((round % 2)); then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[$i]}"); done
  fi
  for stoker in "${order[@]}"; do
    for args in "" "--html $dir/report.html"; do
      /usr/bin/time -f "%e %U %S %M" -o "$dir/time" "$stoker" report --log "$log" $args >/dev/null
      read -r wall user sys kib <"$dir/time"
      printf 'round %d  %-40s report %-7s %6.2f s wall  %6.2f s CPU  %4d MiB\n' "$round" \
        "$stoker" "${args%% *}" "$wall" "$(echo "$user + $sys" | bc)" $((kib / 1024))
    done
  done
done
