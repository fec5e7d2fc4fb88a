#!/usr/bin/env bash
# The plugin's Debian package for the Slurm in a root: `scripts/package.sh --slurm-root ROOT`
# runs this (see its usage). Plugin-only (STOKER_PLUGIN_ONLY), against the bullseye sysroot
# (glibc 2.31; libstdc++ static and hidden), with ROOT's Slurm headers copied into the build
# folder: the root's own /usr/include holds its glibc's headers too, which must not mix with
# the sysroot's.
#   package_plugin.sh ROOT [BUILD] [OUT]   (BUILD, OUT: "" for the defaults)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd -P)
root=$(realpath -m "$1") build=${2:-} out=${3:-}
die() { echo "package: $*" >&2; exit 1; }

[ -f "$root/usr/include/slurm/spank.h" ] ||
  die "$root has no Slurm headers (usr/include/slurm/spank.h): install libslurm-dev there"
version_h=$root/usr/include/slurm/slurm_version.h
[ -f "$version_h" ] || version_h=$root/usr/include/slurm/slurm.h  # before Slurm 21.08
number=$(sed -n 's/^#define SLURM_VERSION_NUMBER[[:space:]]*\(0x[0-9a-fA-F]*\).*/\1/p' "$version_h")
[ -n "$number" ] || die "$version_h: no SLURM_VERSION_NUMBER"
tag=$(printf 'sl%d%02d' $(((number >> 16) & 255)) $(((number >> 8) & 255)))
build=$(realpath -m "${build:-$src/build-$tag}")
out=$(realpath -m "${out:-$build/packages}")

# Where that Slurm keeps its plugins (Debian: slurm-wlm; RPM-built and source: slurm).
plugin_dir=""
for d in usr/lib/x86_64-linux-gnu/slurm-wlm usr/lib/x86_64-linux-gnu/slurm usr/lib64/slurm \
  usr/lib/slurm; do
  [ -d "$root/$d" ] && { plugin_dir=/$d; break; }
done
[ -n "$plugin_dir" ] || die "$root has no Slurm plugin folder (usr/lib/*/slurm-wlm or slurm)"

sysroot=$("$src/scripts/sysroot.sh") || die "no bullseye sysroot (scripts/sysroot.sh failed)"
rm -rf "$build/slurm-include" && mkdir -p "$build/slurm-include"
cp -a "$root/usr/include/slurm" "$build/slurm-include/"
launcher=()
if command -v ccache >/dev/null; then  # the four releases share stoker_core's objects
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # One object for every build folder (ccache otherwise hashes the folder, for the debug
  # information's sake; the package's plugin is stripped).
  export CCACHE_NOHASHDIR=true
fi
log=$build/configure.log
# A fresh cache each time: the toolchain's flags are read into it once, and a changed
# toolchain must reach an existing build folder (its objects are kept).
rm -f "$build/CMakeCache.txt"
STOKER_SYSROOT=$sysroot cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-bullseye.cmake" -DSTOKER_SYSROOT="$sysroot" \
  -DSTOKER_PLUGIN_ONLY=ON -DSTOKER_SLURM_INCLUDE_DIR="$build/slurm-include" \
  -DSTOKER_SLURM_PLUGIN_DIR="$plugin_dir" -DSTOKER_WERROR="${STOKER_WERROR:-OFF}" \
  "${launcher[@]}" >"$log" 2>&1 || { tail -n 30 "$log" >&2; die "configure failed: $log"; }
nice cmake --build "$build" -j"${STOKER_JOBS:-$(nproc)}" --target spank_stoker >"$build/build.log" 2>&1 ||
  { tail -n 30 "$build/build.log" >&2; die "build failed: $build/build.log"; }

mkdir -p "$out"
rm -f "$out"/stoker-slurm-plugin_*.deb
if ! cpack --config "$build/CPackConfig.cmake" -B "$out" >"$out/cpack.log" 2>&1; then
  tail -n 40 "$out/cpack.log" >&2
  die "cpack failed: $out/cpack.log"
fi
rm -rf "$out/_CPack_Packages"
ls "$out"/stoker-slurm-plugin_*+"$tag"_*.deb
