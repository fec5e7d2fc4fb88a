#!/usr/bin/env bash
# Runs one libFuzzer target longer than `ctest -L fuzz` does (docs/reliability.md, "Fuzzing").
#   scripts/fuzz.sh                  lists the targets
#   scripts/fuzz.sh NAME SECONDS     builds build-fuzz/ (clang-14, ASan+UBSan) when needed and
#                                    fuzzes NAME for SECONDS, niced, from its seeds
#                                    (tests/fuzz/corpus/NAME/) and the corpus earlier runs grew
#                                    (build-fuzz/tests/fuzz/work/NAME/corpus/)
#   scripts/fuzz.sh NAME SECONDS -jobs=2 ...   further arguments go to libFuzzer
# A finding stops the run; its input is saved under build-fuzz/tests/fuzz/work/NAME/artifacts/
# (replay it: build-fuzz/tests/fuzz/fuzz_NAME FILE). Needs clang-14 and libclang-rt-14-dev
# (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
src=tests/fuzz
if [ $# -lt 2 ]; then
  echo "usage: scripts/fuzz.sh NAME SECONDS [libFuzzer options]; targets:" >&2
  for f in "$src"/*_fuzz.cpp; do f=${f##*/}; echo "  ${f%_fuzz.cpp}" >&2; done
  exit 2
fi
name=$1 seconds=$2
shift 2
[ -f "$src/${name}_fuzz.cpp" ] || { echo "fuzz.sh: no target '$name' (tests/fuzz/${name}_fuzz.cpp)" >&2; exit 2; }
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: SECONDS '$seconds' is not a whole number" >&2; exit 2;; esac
build=${STOKER_FUZZ_BUILD:-build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSTOKER_FUZZ=ON \
    -DSTOKER_BUILD_TESTS=OFF -DSTOKER_WITH_CUDA=OFF -DSTOKER_WITH_PYTHON=OFF \
    -DSTOKER_WITH_SPANK=OFF -DSTOKER_WITH_MPI=OFF >/dev/null
fi
cmake --build "$build" --target "fuzz_$name"
exec "$src/run_fuzzer.sh" "$build/tests/fuzz/fuzz_$name" "$PWD/$src" "$PWD/$build/tests/fuzz/work" \
  "$seconds" "$@"
