#!/usr/bin/env bash
# Checks tests/support/mpi_launch.sh with stand-in launchers (the real Open MPI crash
# cannot be caused on demand): a launch that failed with Open MPI's TCP wire-up message
# (or with only the crashed rank's null-pointer report) runs once more; any other failure runs
# once and keeps its status and output.
set -uo pipefail
launch=$(dirname "$0")/mpi_launch.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }

# Crashes like Open MPI 4.1.4 the first time, succeeds the second.
cat >"$work/flaky" <<'SH'
#!/bin/sh
n=$(cat "$1" 2>/dev/null || echo 0); echo $((n + 1)) >"$1"
[ "$n" -ge 1 ] && { echo "ranks done"; exit 0; }
echo "WARNING: Open MPI failed to TCP connect to a peer MPI process.  This" >&2
echo "srun: error: n2: task 2: Segmentation fault" >&2
exit 139
SH
chmod +x "$work/flaky"
out=$("$launch" "$work/flaky" "$work/count" 2>"$work/err")
rc=$?
check "a wire-up crash is launched once more and passes" '[ $rc = 0 ] && [ "$out" = "ranks done" ]'
check "two launches" '[ "$(cat "$work/count")" = 2 ]'
check "it says why" 'grep -q "launching once more" "$work/err"'

# Any other failure: one launch, its status and stderr unchanged.
rm -f "$work/count"
out=$("$launch" sh -c 'echo x >>"$0"; echo "rank 3: stoker: error: ranks disagree" >&2; exit 7' \
  "$work/count" 2>"$work/err")
rc=$?
check "another failure keeps its status" '[ $rc = 7 ]'
check "and is launched once" '[ "$(wc -l <"$work/count")" = 1 ]'
check "its stderr passes through" 'grep -q "ranks disagree" "$work/err"'

# A crash that repeats is reported after the second launch.
out=$("$launch" sh -c 'echo "Open MPI failed to TCP connect to a peer MPI process" >&2; exit 139' \
  2>"$work/err")
rc=$?
check "a second crash fails the launch" '[ $rc = 139 ]'
check "after exactly two launches" '[ "$(grep -c "Open MPI failed" "$work/err")" = 2 ]'
# The crash as the crashed rank's own report shows it, the peers silent (the multi-node
# template's job, a CI run): once more. A segmentation fault with a frame of the program is
# the program's, and is not.
cat >"$work/report" <<'SH'
#!/bin/sh
n=$(cat "$1" 2>/dev/null || echo 0); echo $((n + 1)) >"$1"
[ "$n" -ge 1 ] && { echo "ranks done"; exit 0; }
for pid in 16920 16919; do
  echo "[vm:$pid] *** Process received signal ***"
  echo "[vm:$pid] Signal: Segmentation fault (11)"
  echo "[vm:$pid] Signal code: Address not mapped (1)"
  echo "[vm:$pid] Failing at address: (nil)"
  echo "[vm:$pid] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7fcbc945a050]"
  [ -n "$2" ] && echo "[vm:$pid] [ 1] $2(+0x1d2f)[0x55d0c1a1fd2f]"
  echo "[vm:$pid] *** End of error message ***"
done >&2
echo "srun: error: n2: tasks 2-3: Segmentation fault" >&2
exit 139
SH
chmod +x "$work/report"
rm -f "$work/count"
out=$("$launch" "$work/report" "$work/count" "" 2>"$work/err")
rc=$?
check "a rank's null-pointer report alone is launched once more" '[ $rc = 0 ] && [ "$out" = "ranks done" ]'
rm -f "$work/count"
"$launch" "$work/report" "$work/count" /usr/local/bin/stoker_train >/dev/null 2>"$work/err"
rc=$?
check "a crash in the program's own frames is not" '[ $rc = 139 ] && [ "$(cat "$work/count")" = 1 ]'
[ $fails = 0 ] || { echo "$fails check(s) failed"; exit 1; }
