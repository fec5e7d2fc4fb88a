#!/usr/bin/env bash
# reach.source_build_SUITE: an admin's build from source, as docs/admin-guide.md ("Build from
# source") gives it, inside the SUITE root with that root's own compiler, CMake and Slurm:
# `cmake -DSTOKER_PLUGIN_ONLY=ON` over a copy of this checkout's sources, then the plugin
# alone, then the root's own `srun --help` loads what it built. The root holds the minimal
# package set only (Slurm's headers, hwloc, nlohmann-json, the toolchain): no libjpeg, libpng,
# libwebp, zstd or Python headers, which the test checks first, or it would prove nothing.
#
#   tests/reach/source_build.sh SUITE WORK_DIR
#
# Exit 77 when the root is missing or lacks the toolchain (scripts/roots.sh packages SUITE).
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
suite=$1 work=$2
root_of "$suite"; root=$REPLY
for f in usr/bin/cmake usr/bin/g++ usr/bin/ninja usr/include/hwloc.h usr/include/slurm/spank.h \
  usr/include/nlohmann/json.hpp; do
  [ -e "$root/$f" ] || skip "the $suite root has no /$f: it is not the build root (scripts/roots.sh)"
done
for f in jpeglib.h png.h webp/decode.h zstd.h turbojpeg.h gtest/gtest.h; do
  found=$(find "$root/usr/include" -path "*/$f" -print -quit)
  check_not "the $suite root has no $f" . "$found"
done
found=$(find "$root/usr/include" -name Python.h -print -quit)
check_not "the $suite root has no Python.h" . "$found"

rm -rf "$work" && mkdir -p "$work/src"
git -C "$reach_src" ls-files -z --cached --others --exclude-standard |
  (cd "$reach_src" && tar --null -T - -cf -) | tar -xf - -C "$work/src"
t0=$SECONDS
rc=0
out=$(in_root "$root" "$work" sh -c 'cmake -S /mnt/src -B /mnt/build -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTOKER_PLUGIN_ONLY=ON &&
  nice cmake --build /mnt/build -j2 --target spank_stoker' 2>&1) || rc=$?
[ $rc = 0 ] || { echo "FAIL: the plugin-only build in $suite (exit $rc):"; echo "$out" | tail -n 40; exit 1; }
echo "ok   plugin-only build with $suite's $(in_root "$root" "" g++ --version | head -n 1) and cmake $(in_root "$root" "" cmake --version | sed -n 's/cmake version //p') ($((SECONDS - t0)) s)"
echo "$out" | grep -E '^-- stoker' | sed 's/^/  /'
cache=$(cat "$work/build/CMakeCache.txt")
check_not "no image, compression, Python or GoogleTest dependency was looked for" \
  '^(JPEG_INCLUDE_DIR|PNG_PNG_INCLUDE_DIR|ZLIB_INCLUDE_DIR|pkgcfg_lib_ZSTD|pkgcfg_lib_WEBP|Python3_EXECUTABLE|GTest_DIR|CLI11_DIR)[:=]' "$cache"

write_srun_conf "$work/srun" "$work/build/spank_plugin/spank_stoker.so"
out=$(in_root "$root" "$work/srun" env SLURM_CONF=/mnt/slurm.conf srun --help 2>&1) || true
check "$suite's srun loads the plugin built there (--stoker-profile listed)" '--stoker-profile' "$out"
check_not "without an error" 'error:|Incompatible' "$out"
finish
