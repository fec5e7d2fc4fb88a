#!/usr/bin/env bash
# reach.faults_sysroot_build: the wheel's build against the bullseye sysroot
# (cmake/toolchain-bullseye.cmake; tests, benchmarks, CUDA and the plugin off): the static
# libraries, the `stoker` command and the Python package (libstoker.so and its .py files),
# warnings as errors, in BUILD_DIR, and the wheel made of them in WHEEL_DIR
# (scripts/package.sh --only wheel). reach.faults_glibc_floor then checks what it built, and
# the reach.python_* tests install the wheel in each root. The command must run in the
# bullseye root (glibc 2.31) with the sysroot's libraries.
#
#   tests/reach/sysroot_build.sh BUILD_DIR WHEEL_DIR
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 2 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
build=$1 wheels=$2
sysroot=$("$reach_src/scripts/sysroot.sh" path) || skip "no bullseye sysroot (reach.sysroot makes it)"
t0=$SECONDS
log=$(mktemp)
if ! STOKER_WERROR=ON STOKER_JOBS=${STOKER_JOBS:-2} "$reach_src/scripts/package.sh" --only wheel \
  --wheel-build "$build" --out "$wheels" >"$log" 2>&1; then
  echo "FAIL: scripts/package.sh --only wheel:"; cat "$log"; rm -f "$log"; exit 1
fi
echo "ok   built the static libraries, stoker, libstoker.so and the wheel against $sysroot ($((SECONDS - t0)) s)"
sed 's/^/  /' "$log"; rm -f "$log"
check "the sysroot build names its glibc floor" 'built for glibc 2\.31' "$(cat "$build/configure.log")"
check "the wheel is tagged for glibc 2.31 or older" \
  'stoker-[0-9.]+-py3-none-manylinux_2_(1[7-9]|2[0-9]|3[01])_x86_64\.whl' "$(ls "$wheels")"
# In the bullseye root (glibc 2.31) with the sysroot's libraries (the wheel bundles them):
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
