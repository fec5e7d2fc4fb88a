#!/usr/bin/env bash
# The wheel for every CPython from 3.9 on glibc 2.31 and later: `scripts/package.sh` runs this
# (see its usage). The `stoker` command and the package (target stoker_python: libstoker.so
# and the .py files) are built against the bullseye sysroot (scripts/sysroot.sh,
# cmake/toolchain-bullseye.cmake: glibc 2.31, libstdc++ static and hidden), then
# scripts/wheel.py --sysroot bundles the sysroot's libraries with their Debian copyright files.
#   package_wheel.sh BUILD OUT [--no-build]
# BUILD: the sysroot build folder (configured afresh, its objects kept); --no-build packages it
# as it is, against the sysroot it was configured with. STOKER_WERROR=ON: warnings are errors
# (the project's CI); STOKER_JOBS: parallel jobs (default: all cores).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd -P)
die() { echo "package: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: package_wheel.sh BUILD OUT [--no-build]"
build=$(realpath -m "$1") out=$(realpath -m "$2") build_first=1
[ "${3:-}" != --no-build ] || build_first=0

if [ $build_first = 1 ]; then
  sysroot=$("$src/scripts/sysroot.sh") || die "no bullseye sysroot (scripts/sysroot.sh failed)"
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  mkdir -p "$build"
  log=$build/configure.log
  # A fresh cache each time: the toolchain's flags are read into it once, and a changed
  # toolchain must reach an existing build folder (its objects are kept). No SPANK plugin:
  # it is built for each Slurm release on its own (package.sh --slurm-root).
  rm -f "$build/CMakeCache.txt"
  STOKER_SYSROOT=$sysroot cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-bullseye.cmake" -DSTOKER_SYSROOT="$sysroot" \
    -DSTOKER_WERROR="${STOKER_WERROR:-OFF}" -DSTOKER_BUILD_TESTS=OFF -DSTOKER_WITH_PYTHON=ON \
    -DSTOKER_WITH_CUDA=OFF -DSTOKER_WITH_SPANK=OFF "${launcher[@]}" >"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; die "configure failed: $log"; }
  nice cmake --build "$build" -j"${STOKER_JOBS:-$(nproc)}" --target stoker stoker_python \
    >"$build/build.log" 2>&1 || { tail -n 30 "$build/build.log" >&2; die "build failed: $build/build.log"; }
fi
# The sysroot the build was linked against: its libraries are the ones to bundle.
sysroot=$(sed -n 's/^STOKER_SYSROOT:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)
[ -n "$sysroot" ] || die "$build is not a sysroot build (no STOKER_SYSROOT in its CMakeCache.txt)"
python3 "$src/scripts/wheel.py" --build "$build" --sysroot "$sysroot" --out "$out"
