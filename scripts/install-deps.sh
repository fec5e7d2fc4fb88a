#!/usr/bin/env bash
# Installs every Debian package stoker needs to build, test and demo.
# Idempotent; quiet unless something fails (then the apt log is printed).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git
  # runtime libraries
  libhwloc-dev hwloc libjpeg62-turbo-dev libturbojpeg0-dev libpng-dev
  libwebp-dev  # WebP images
  libarchive-dev  # benchmarks/tar_readers only: stoker's tar reader against libarchive
  zlib1g-dev libzstd-dev zstd  # .tar.gz and .tar.zst shards (zstd: test shards)
  libcli11-dev nlohmann-json3-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # Slurm cluster for integration tests, and MPI
  slurm-wlm slurm-client libslurm-dev munge libpmix-dev openmpi-bin libopenmpi-dev
  # Python module and the PyTorch peer
  python3 python3-numpy python3-torch python3-torchvision python3-pil
  # used by the test harnesses; lintian checks the Debian packages (scripts/package.sh)
  procps util-linux time lintian
  patchelf  # tests/python/test_faults_import.py: an extension whose library is missing
  strace  # tests/python/test_faults_metadata.py and benchmarks/metadata_storm.sh count syscalls
  # pages looked at in headless Chromium (tests/support/browser_check.py), and the metrics
  # scraped by a real Prometheus through node-exporter's textfile collector (tests/browser/)
  chromium chromium-driver prometheus prometheus-node-exporter
  # the fuzz build (tests/fuzz, scripts/fuzz.sh): clang and its libFuzzer runtime; the
  # Python property tests (tests/python/test_hypothesis_*.py)
  clang-14 libclang-rt-14-dev python3-hypothesis
  clang-format  # tests/scripts/format_check.sh (ctest scripts.format): the tree matches .clang-format
  # the reach family (tests/reach): Debian roots of other suites (scripts/roots.sh), entered
  # with bubblewrap; the source RPM (scripts/rpm.sh); ccache shares the plugin builds' objects
  debootstrap bubblewrap rpm ccache
)

. "$(dirname "$0")/as-root.sh"
as_root install-deps "it installs Debian packages"

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# torchvision's reference training scripts (the user guide's worked example and its test),
# from Debian's source package of the installed torchvision, cached in /var/cache/stoker.
references() { "$(dirname "$0")/torchvision-references.sh" >/dev/null; }
[ ${#missing[@]} -eq 0 ] && { references; exit 0; }

log=$(mktemp)
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  echo "install-deps: apt-get failed installing: ${missing[*]}" >&2
  tail -n 40 "$log" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
# The tests run Prometheus and node-exporter themselves, on ports picked at run time; the
# packages' own services (started by systemd on install) are not used: stop those just
# installed so they do not listen on 9090/9100 of a build machine.
if [ -d /run/systemd/system ]; then
  for p in prometheus prometheus-node-exporter; do
    case " ${missing[*]} " in
      *" $p "*) systemctl disable --now "$p.service" >/dev/null 2>&1 || true ;;
    esac
  done
fi
references
