#!/usr/bin/env bash
# The faults family's harness (ctest fixture faults_harness): no fault test may leave a
# process or daemon behind (threads: each C++ fault suite and Python fault test checks its
# own process, tests/support/leftover_check.cpp and testdata.NoLeftovers). Every fault test runs with TAG (STOKER_FAULTS_RUN=<build
# folder>) in its environment, and everything it starts inherits it (forked children,
# mpirun's daemons, srun's tasks, a process that daemonized itself).
#   leftovers.sh start TAG   before the fault tests: clears what a killed earlier run left
#   leftovers.sh check TAG   after them: fails naming each process that carries TAG (after a
#                            grace period for ones that are exiting), then kills them, so
#                            that they do not outlive the check
# The tag names the build folder: runs of other build folders on the machine are not seen.
set -uo pipefail
mode=${1:?start or check}
tag=${2:?the STOKER_FAULTS_RUN=... tag}

tagged() {  # pid and command of every process whose environment holds the tag
  local env pid
  for env in /proc/[0-9]*/environ; do
    pid=${env#/proc/}
    pid=${pid%/environ}
    [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
    if tr '\0' '\n' 2>/dev/null <"$env" | grep -qxF -- "$tag"; then
      echo "$pid $(tr '\0' ' ' 2>/dev/null </proc/"$pid"/cmdline | cut -c1-200)"
    fi
  done
}

kill_all() {
  local line
  while read -r line; do
    [ -n "$line" ] && kill -9 "${line%% *}" 2>/dev/null
  done <<<"$(tagged)"
}

case $mode in
  start)
    left=$(tagged)
    if [ -n "$left" ]; then
      echo "left by an earlier run (removed now):"
      echo "$left"
    fi
    kill_all
    echo "fault tests run with $tag"
    ;;
  check)
    for _ in $(seq 100); do  # up to 10 s for processes that are exiting
      left=$(tagged)
      [ -z "$left" ] && break
      sleep 0.1
    done
    if [ -n "$left" ]; then
      echo "FAIL: fault tests left these processes behind (killed now):"
      echo "$left"
      kill_all
      exit 1
    fi
    echo "no process or daemon of a fault test is left"
    ;;
  *)
    echo "usage: $0 start|check TAG" >&2
    exit 2
    ;;
esac
