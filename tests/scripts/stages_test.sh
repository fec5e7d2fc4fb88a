#!/usr/bin/env bash
# scripts/stages.sh, scripts/test.sh's stage list: a failed stage still fails the run, and the
# summary names it and every stage that never ran (the ASan stage failed, and
# nothing said that the TSan and fuzz stages had not run).
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd -P)
work=$(mktemp -d /tmp/stoker-stages.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME EXPECTED_RC REGEX RC OUTPUT
  if [ "$4" = "$2" ] && grep -qE -- "$3" <<<"$5"; then echo "ok   $1"; else
    echo "FAIL $1: exit $4 (want $2), output:"; echo "$5"; failures=$((failures + 1)); fi
}
run() {  # run BODY: a script shaped like test.sh, with BODY as its stages
  printf '#!/usr/bin/env bash\nset -euo pipefail\n. %q\nstages_begin deps build asan tsan fuzz\n%s\n' \
    "$src/scripts/stages.sh" "$1" >"$work/t.sh"
  out=$(bash "$work/t.sh" 2>&1)
  rc=$?
}

run 'stage deps "deps"; true; stage build "build"; true; stage asan "asan"; exit 3'
check "a failed stage fails the run" 3 'FAILED \(exit 3\)' "$rc" "$out"
check "the failed stage is named" 3 '^  asan: FAILED after [0-9]+ s$' "$rc" "$out"
check "the stages that never ran are named" 3 \
  '^  not run, because an earlier stage failed: tsan fuzz$' "$rc" "$out"
check "the stages that ran are timed" 3 '^  build: [0-9]+ s$' "$rc" "$out"

run 'stage deps "deps"; false; stage build "build"'
check "set -e in a stage is a failure of that stage" 1 \
  'not run, because an earlier stage failed: build asan tsan fuzz' "$rc" "$out"

run 'for s in deps build asan tsan fuzz; do stage "$s" "$s"; done'
check "a whole run passes and names no stage as not run" 0 'passed after' "$rc" "$out"
if grep -q "not run" <<<"$out"; then echo "FAIL: a passing run named a stage as not run"; failures=$((failures + 1)); fi

[ "$failures" = 0 ]
