#!/usr/bin/env bash
# Builds stoker's three Debian packages with CPack (cmake/StokerPackaging.cmake):
#   stoker-slurm-plugin_VERSION_ARCH.deb  the SPANK plugin, its plugstack line (disabled)
#   stoker_VERSION_ARCH.deb               the `stoker` command
#   python3-stoker_VERSION_ARCH.deb       the Python module
# and the wheel stoker-VERSION-py3-none-manylinux_2_Y_x86_64.whl, Y <= 31, for every CPython
# from 3.9 on glibc 2.31 and later (scripts/package_wheel.sh: the module and the command built
# against the bullseye sysroot, with the libraries they link bundled, for images and hosts
# without the .debs).
#
#   scripts/package.sh [--build DIR] [--wheel-build DIR] [--out DIR] [--no-build] [--only debs|wheel]
#   scripts/package.sh --slurm-root ROOT [--build DIR] [--out DIR]
#
#   --build DIR  the build folder to package (default: build/, configured as scripts/test.sh
#                does when it is not configured yet); the packaged targets are built first
#   --wheel-build DIR  the wheel's build folder, against the bullseye sysroot (default:
#                BUILD/bullseye; scripts/sysroot.sh makes the sysroot when missing)
#   --out DIR    where the .debs and the wheel go (default: DIR/packages); older ones there
#                are removed
#   --no-build   package the builds as they are (the test suite's packaging tests: built already)
#   --only debs|wheel  make the .debs only (the host build) or the wheel only (the sysroot build)
#   --slurm-root ROOT  only the plugin's package, for the Slurm whose headers ROOT holds
#                (ROOT/usr/include/slurm: a Debian root of scripts/roots.sh, or any root with
#                libslurm-dev): stoker-slurm-plugin_VERSION+slMMmm_amd64.deb, built plugin-only
#                against the bullseye sysroot (scripts/sysroot.sh, cmake/toolchain-bullseye.cmake)
#                so that it runs on glibc 2.31 and later; Depends on that Slurm release.
#                Default build folder: build-slMMmm/ (slMMmm: sl2411 for Slurm 24.11).
#
# Needs the build dependencies (scripts/install-deps.sh: libslurm-dev for the plugin,
# dpkg-dev for dpkg-shlibdeps; patchelf and binutils for the wheel) and, for the wheel's
# sysroot, Debian's archive once. Root is not needed (the sysroot's folder must be writable
# once, to make it). Prints the path of each package. Install on a node:
# apt install ./stoker-slurm-plugin_*.deb; in an image or a venv: pip install stoker-*.whl
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd -P)
build=""
wheel_build=""
out=""
build_first=1
only=""
slurm_root=""
usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --wheel-build) [ $# -ge 2 ] || usage; wheel_build=$2; shift 2 ;;
    --only)
      [ $# -ge 2 ] || usage
      case $2 in debs | wheel) only=$2 ;; *) usage ;; esac
      shift 2
      ;;
    --slurm-root) [ $# -ge 2 ] || usage; slurm_root=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --no-build) build_first=0; shift ;;
    -h|--help) usage ;;
    *) echo "package: unknown argument '$1'" >&2; usage ;;
  esac
done
if [ -n "$slurm_root" ]; then
  exec "$src/scripts/package_plugin.sh" "$slurm_root" "$build" "$out"
fi
build=$(realpath -m "${build:-$src/build}")
out=$(realpath -m "${out:-$build/packages}")
wheel_build=$(realpath -m "${wheel_build:-$build/bullseye}")
wheel() {
  local flag=()
  [ $build_first = 1 ] || flag=(--no-build)
  "$src/scripts/package_wheel.sh" "$wheel_build" "$out" "${flag[@]}"
}
if [ "$only" = wheel ]; then
  wheel
  exit 0
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# The packages this build can make (CPackConfig.cmake's components): all three, or say why not.
components=$(sed -n 's/^set(CPACK_COMPONENTS_ALL "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
for c in plugin python; do
  case ";$components;" in
    *";$c;"*) ;;
    *)
      case $c in
        plugin) why="the SPANK plugin (it needs libslurm-dev)" ;;
        python) why="the Python module (it needs python3)" ;;
      esac
      echo "package: $build does not build $why: run scripts/install-deps.sh, then configure it again" >&2
      exit 1
      ;;
  esac
done
[ $build_first = 0 ] || cmake --build "$build" -j"$(nproc)" --target stoker spank_stoker stoker_python

mkdir -p "$out"
rm -f "$out"/stoker_*.deb "$out"/stoker-slurm-plugin_*.deb "$out"/python3-stoker_*.deb
log=$out/cpack.log
if ! cpack --config "$build/CPackConfig.cmake" -B "$out" >"$log" 2>&1; then
  echo "package: cpack failed; its output ($log):" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
rm -rf "$out/_CPack_Packages"
ls "$out"/stoker_*.deb "$out"/stoker-slurm-plugin_*.deb "$out"/python3-stoker_*.deb
[ "$only" = debs ] || wheel
