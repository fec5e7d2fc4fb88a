#!/usr/bin/env bash
# reach.faults_sysroot_build: the static libraries and the `stoker` command built against the
# bullseye sysroot (cmake/toolchain-bullseye.cmake; tests, benchmarks, Python and CUDA off),
# warnings as errors, in BUILD_DIR; reach.faults_glibc_floor then checks what it made. The command
# must run in the bullseye root (glibc 2.31) with the sysroot's libraries.
#
#   tests/reach/sysroot_build.sh BUILD_DIR
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 1 ] || { sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
build=$1
sysroot=$("$reach_src/scripts/sysroot.sh" path) || skip "no bullseye sysroot (reach.sysroot makes it)"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
t0=$SECONDS
# A fresh cache each time: the toolchain's flags are read into it once, and a changed
# toolchain must reach an existing build folder (its objects are kept).
rm -f "$build/CMakeCache.txt"
STOKER_SYSROOT=$sysroot cmake -S "$reach_src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE="$reach_src/cmake/toolchain-bullseye.cmake" -DSTOKER_SYSROOT="$sysroot" \
  -DSTOKER_WERROR=ON -DSTOKER_BUILD_TESTS=OFF -DSTOKER_WITH_PYTHON=OFF -DSTOKER_WITH_CUDA=OFF \
  -DSTOKER_WITH_SPANK=OFF "${launcher[@]}" >"$build.configure.log" 2>&1 ||
  { tail -n 30 "$build.configure.log"; echo "FAIL: configure"; exit 1; }
nice cmake --build "$build" -j"${STOKER_JOBS:-2}" --target stoker >"$build.log" 2>&1 ||
  { tail -n 30 "$build.log"; echo "FAIL: build"; exit 1; }
echo "ok   built the static libraries and stoker against $sysroot ($((SECONDS - t0)) s)"
check "the sysroot build names its glibc floor" 'built for glibc 2\.31' "$(cat "$build.configure.log")"
# In the bullseye root (glibc 2.31) with the sysroot's libraries (the wheel will bundle them):
# the command starts and plans. Linked with the host's crt1.o it ran main() with none of its
# static objects constructed (no subcommand registered): "A subcommand is required".
if REPLY=$("$reach_src/scripts/roots.sh" path bullseye); then
  BWRAP_EXTRA=(--ro-bind "$sysroot/usr/lib/x86_64-linux-gnu" /usr/local/lib --ro-bind /sys /sys)
  out=$(in_root "$REPLY" "$build/runtime" env LD_LIBRARY_PATH=/usr/local/lib /mnt/stoker plan 2>&1 || true)
  check "stoker plan runs on glibc 2.31 (the bullseye root)" '^stoker plan: local rank 0 of 1' "$out"
  out=$(in_root "$REPLY" "$build/runtime" env LD_LIBRARY_PATH=/usr/local/lib /mnt/stoker --help 2>&1 || true)
  check "its subcommands are registered there" '^  doctor +Check' "$out"
else
  echo "SKIP (one check): no bullseye root to run the command in (scripts/roots.sh make bullseye)"
fi
finish
