#!/usr/bin/env bash
# `stoker report --html` looked at in headless Chromium: a generated job log (the plugin's
# line format, tests/support/make_job_log.py) with a broken line among its lines; the page
# must show the leading job's id and input wait, its suggested change, a plot with points
# and a node picture, and log no error. The screenshot stays in OUT_DIR. Skips (77) when
# Chromium is not installed.
#
#   tests/browser/report_page_test.sh STOKER OUT_DIR
set -uo pipefail
stoker=${1:?usage: report_page_test.sh STOKER OUT_DIR}
out=${2:?usage: report_page_test.sh STOKER OUT_DIR}
support=$(dirname "$0")/../support
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$support/make_job_log.py" "$work/jobs.jsonl" 40 || exit 1
echo '{"time":"2026-12-02T10:00:01Z","job":"cut short' >>"$work/jobs.jsonl"
"$stoker" report --log "$work/jobs.jsonl" --html "$out/report.html" >"$work/text" 2>"$work/err" ||
  { cat "$work/err"; exit 1; }
grep -q "jobs.jsonl:41: is not valid JSON" "$work/err" || { echo "FAIL: the broken line is not named"; cat "$work/err"; exit 1; }
# Job 1000 waits most (make_job_log.py): first in the table, with its plot and picture.
"$support/browser_check.py" "$out/report.html" --screenshot "$out/report.png" \
  --expect-text 'Job 1000 step 0: input wait 5' --expect-text 'raise MaxPrefetch in profile cv' \
  --expect-text 'Per user and partition' --expect-selector 'div.plot svg polyline' \
  --expect-selector 'div.plot svg circle' --expect-selector 'div.node svg rect'
rc=$?
[ $rc = 0 ] && echo "ok   the report page shows job 1000, its wait, its plot and its node ($out/report.png)"
exit $rc
