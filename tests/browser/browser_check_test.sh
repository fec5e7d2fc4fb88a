#!/usr/bin/env bash
# Checks tests/support/browser_check.py on tiny pages in real headless Chromium: a page
# that shows everything passes and leaves its screenshot; a hidden text, a script error,
# a plot without points, a missing page and a page on the network each fail with one
# line that says which. Skips (77) when Chromium is not installed.
#
#   tests/browser/browser_check_test.sh OUT_DIR      (screenshots are left in OUT_DIR)
set -uo pipefail
check_page=$(dirname "$0")/../support/browser_check.py
out=${1:?usage: browser_check_test.sh OUT_DIR}
mkdir -p "$out"
pages=$(mktemp -d)
trap 'rm -rf "$pages"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); return 1; fi; }

# A page whose text and plot are drawn by its script, as the report and console pages are.
page() {  # page NAME EXTRA_BODY: a page with a heading, a scripted line and EXTRA_BODY
  cat >"$pages/$1.html" <<HTML
<!doctype html><html><head><title>$1</title></head><body>
<h1>Job 4242</h1><p id="share"></p>$2
<script>document.getElementById('share').textContent = 'input wait 37 %';</script>
</body></html>
HTML
}
plot='<svg width="320" height="120"><polyline fill="none" stroke="black" points="0,110 80,60 160,40 320,10"/></svg>'
page good "$plot"
"$check_page" "$pages/good.html" --screenshot "$out/good.png" --expect-text 'Job 4242' \
  --expect-text 'input wait 37 %' --expect-selector 'svg polyline' >"$pages/log" 2>&1
rc=$?
if [ $rc = 77 ]; then cat "$pages/log"; exit 77; fi
check "a page that shows everything passes" '[ $rc = 0 ]' || cat "$pages/log"
check "its screenshot is a PNG" '[ "$(head -c 8 "$out/good.png" | od -An -c | tr -d " ")" = "211PNG\r\n032\n" ]'

expect_fail() {  # expect_fail WHAT PATTERN PAGE [ARGS...]: fails, one line matching PATTERN
  local what=$1 pattern=$2
  shift 2
  "$check_page" "$@" >"$pages/out" 2>"$pages/err"
  local rc=$?
  check "$what: fails" '[ $rc = 1 ]'
  check "$what: says so in one line" \
    '[ "$(wc -l <"$pages/err")" = 1 ] && grep -q -- "$pattern" "$pages/err"' || cat "$pages/err"
}
# A text only in the source and an empty plot: one run, both said in its one line.
page hidden '<svg width="320" height="120"><polyline fill="none" stroke="black" points=""/></svg>
<p style="display:none">throughput 900 samples/s</p>'
expect_fail "a hidden text and a plot without points" \
  "text 'throughput 900 samples/s' is not visible; 'svg polyline' is a plot without points" \
  "$pages/hidden.html" --screenshot "$out/hidden.png" --expect-text 'throughput 900 samples/s' \
  --expect-selector 'svg polyline' --timeout 2
page script_error "$plot<script>undefinedFunction();</script>"
expect_fail "a script error" "logged 1 error(s), first: .*undefinedFunction" \
  "$pages/script_error.html" --screenshot "$out/script_error.png" --expect-text 'Job 4242'
check "a failed check still leaves its screenshot" '[ -s "$out/hidden.png" ]'
expect_fail "a missing page" "no_such.html: no such file" \
  "$pages/no_such.html" --screenshot "$out/missing.png"
expect_fail "a page on the network" "only local pages are opened" \
  http://example.org/ --screenshot "$out/network.png"

[ $fails = 0 ] && echo "all browser_check checks passed" || echo "$fails check(s) failed"
[ $fails = 0 ]
