#!/usr/bin/env bash
# The test command: installs dependencies, builds stoker (with CUDA when the toolkit
# is present), and runs every test family this machine can run, then the unit tests
# again under ASan+UBSan, the loader's tests under TSan, and each fuzz target for a few
# seconds (build-fuzz/, clang + libFuzzer). The wheel's build against the bullseye sysroot
# (build/bullseye: scripts/package.sh --only wheel) is made with the main build, so that the
# package and container tests install the wheel that ships. The reach family (tests/reach: the
# plugin for four Slurm releases and the wheel, in Debian roots) runs in its own stage after
# the tests; its roots (scripts/roots.sh, cached in /var/cache/stoker) are made in the
# background from the start.
#   scripts/test.sh                       everything
#   STOKER_TEST_QUICK=1 scripts/test.sh   only the main build's tests
# Needs root (it installs packages and starts a local Slurm cluster): a user who is not
# root runs it again through sudo (scripts/as-root.sh).
# No HWLOC_* variable is needed: no stoker process loads hwloc's plugins (docs/reliability.md).
# Each build turns on STOKER_WERROR (warnings are errors here, not in a user's build).
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
as_root test "it installs Debian packages and starts a local Slurm cluster" "$@"
cd "$(dirname "$0")/.."
jobs=$(nproc)

. scripts/stages.sh
if [ "${STOKER_TEST_QUICK:-0}" = 1 ]; then stages_begin deps build tests; else
  stages_begin deps build tests reach asan tsan fuzz
  # debootstrap is network- and disk-bound: it overlaps the build. Only debootstrap itself is
  # installed first (seconds); the reach stage waits for the roots.
  scripts/roots.sh prepare
  mkdir -p build
  nice scripts/roots.sh make >build/roots.log 2>&1 &
  roots_pid=$!
  roots_t0=$SECONDS
fi

stage deps "installing dependencies (scripts/install-deps.sh; pyxis, enroot and the test image: scripts/containers.sh)"
scripts/install-deps.sh
scripts/containers.sh install
scripts/containers.sh image >/dev/null

stage build "building (build/; build/bullseye: the wheel's, against the bullseye sysroot)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTOKER_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
STOKER_WERROR=ON scripts/package.sh --only wheel --build build --out build/packages

stage tests "tests: all families but bench and reach (build/)"
ctest --test-dir build --output-on-failure -j"$jobs" -LE 'bench|reach'

[ "${STOKER_TEST_QUICK:-0}" = 1 ] && exit 0

stage reach "reach tests: the plugin for Slurm 20.11-26.05 and the wheel in Debian roots (build/; roots: build/roots.log)"
if ! wait "$roots_pid"; then
  tail -n 30 build/roots.log
  echo "test: making the Debian roots failed (build/roots.log)" >&2
  exit 1
fi
echo "roots ready $((SECONDS - roots_t0)) s after they were started:"
grep -E '^roots: .* (made|up to date)' build/roots.log | sed 's/^/  /'
ctest --test-dir build --output-on-failure -j"$jobs" -L reach

stage asan "unit tests under ASan+UBSan (build-asan/)"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSTOKER_SANITIZE=address,undefined \
  -DSTOKER_WERROR=ON -DSTOKER_WITH_CUDA=OFF -DSTOKER_WITH_PYTHON=OFF -DSTOKER_WITH_SPANK=OFF >/dev/null
cmake --build build-asan -j"$jobs" --target unit_tests
# Third-party leaks only, each named and explained in the file.
LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit

stage tsan "loader tests under TSan (build-tsan/)"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTOKER_SANITIZE=thread \
  -DSTOKER_WERROR=ON -DSTOKER_WITH_CUDA=OFF -DSTOKER_WITH_PYTHON=OFF -DSTOKER_WITH_SPANK=OFF >/dev/null
cmake --build build-tsan -j"$jobs" --target unit_loader
ctest --test-dir build-tsan --output-on-failure -L loader

stage fuzz "fuzz targets, ${STOKER_FUZZ_SECONDS:-15} s each (build-fuzz/)"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSTOKER_FUZZ=ON -DSTOKER_WERROR=ON \
  -DSTOKER_FUZZ_SECONDS="${STOKER_FUZZ_SECONDS:-15}" -DSTOKER_BUILD_TESTS=OFF \
  -DSTOKER_WITH_CUDA=OFF -DSTOKER_WITH_PYTHON=OFF -DSTOKER_WITH_SPANK=OFF -DSTOKER_WITH_MPI=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_targets
ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -L fuzz
