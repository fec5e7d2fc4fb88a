#!/usr/bin/env bash
# A user's or packager's build (any CMAKE_BUILD_TYPE, no STOKER_WERROR) compiles without
# -Werror, so a newer compiler's new warning cannot break an install; the project's CI and
# developers turn it on with -DSTOKER_WERROR=ON (scripts/test.sh). Configures only (seconds).
#   tests/scripts/build_flags_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?source dir}
work=$(mktemp -d /tmp/stoker-build-flags.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
flags() {  # flags NAME CMAKE_ARGS...: the compile commands of a fresh configure
  cmake -S "$src" -B "$work/$1" -G Ninja -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DSTOKER_WITH_CUDA=OFF -DSTOKER_WITH_PYTHON=OFF -DSTOKER_WITH_SPANK=OFF -DSTOKER_WITH_MPI=OFF \
    -DSTOKER_BUILD_TESTS=OFF "${@:2}" >"$work/$1.log" 2>&1 || { cat "$work/$1.log"; return 1; }
  cat "$work/$1/compile_commands.json"
}
for type in Release MinSizeRel; do
  if out=$(flags "$type" -DCMAKE_BUILD_TYPE=$type) && ! grep -q -- "-Werror" <<<"$out" &&
     grep -q -- "-Wall" <<<"$out"; then
    echo "ok   $type without STOKER_WERROR: -Wall, no -Werror"
  else
    echo "FAIL $type without STOKER_WERROR: -Werror is on (or the configure failed)"; failures=$((failures + 1))
  fi
done
if out=$(flags werror -DCMAKE_BUILD_TYPE=Release -DSTOKER_WERROR=ON) && grep -q -- "-Werror" <<<"$out"; then
  echo "ok   STOKER_WERROR=ON: -Werror"
else
  echo "FAIL STOKER_WERROR=ON: no -Werror"; failures=$((failures + 1))
fi
[ "$failures" = 0 ]
