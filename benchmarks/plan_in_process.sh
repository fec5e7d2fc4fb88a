#!/usr/bin/env bash
# Planning in-process, two builds side by side (docs/benchmarks.md): each round runs,
# alternated, `stoker plan --json` and a fresh `python3 -c 'import stoker; stoker.plan(...)'`
# from each build, and prints one line per process: "KIND BUILD MICROSECONDS".
#   benchmarks/plan_in_process.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]
# A build folder is one with runtime/stoker and python/stoker (the main build's layout).
set -euo pipefail
before=${1:?before build} after=${2:?after build} rounds=${3:-30}
us() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null 2>&1
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))
}
for _ in $(seq "$rounds"); do
  for name in before after; do
    dir=${!name}
    echo "cli $name $(us "$dir/runtime/stoker" plan --json)"
    echo "py $name $(PYTHONPATH=$dir/python us python3 -c 'import stoker; stoker.plan(environ={})')"
  done
done
