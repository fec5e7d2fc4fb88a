#!/usr/bin/env bash
# Minimal Debian roots for the reach tests (tests/reach/, ctest -L reach): one per suite, so
# that stoker is tried with other glibc, Python, Slurm and torch releases than the host's.
#
#   scripts/roots.sh [make] [SUITE...]  make the roots missing or out of date (default: all)
#   scripts/roots.sh path SUITE         print a complete root's folder; exit 1 when it is not
#   scripts/roots.sh packages SUITE     print the packages a root of SUITE holds (its recipe)
#   scripts/roots.sh prepare            install debootstrap when missing (test.sh runs this in
#                                       the foreground, then `make` in the background)
#
# Roots live in /var/cache/stoker/roots/SUITE (STOKER_ROOTS_DIR), the packages they were made
# from in /var/cache/stoker/debs/SUITE, so a remade root downloads nothing twice. Each root is
# `debootstrap --variant=minbase`, then its packages installed by the root's own apt-get
# (chroot in a private mount namespace). A root is made in SUITE.tmp and moved in place when
# complete; its stamp (.stoker-root) is its recipe: a changed package list remakes it, an
# unchanged one is left alone (idempotent). One lock per suite: two runs at once (the
# background `make` of test.sh and a developer's) make each root once. How long a root took
# from nothing is kept in SUITE/.stoker-root-seconds and printed.
# From nothing (no root, no download cache), one after another on this 2-core machine, Dec 2026:
#   load 10-12 (others building): bullseye 528 s, bookworm 479 s, trixie 455 s, sid 87 s: 26 min
#   load 2.5-5:                   bullseye 187 s, bookworm 246 s, trixie 112 s, sid 47 s: 10 min
# (476 MB, 1.6 GB, 2.0 GB, 553 MB). Downloads and dpkg under nice/ionice; the archive's proxy
# had served the same packages before the second run. The bullseye sysroot: 48 s and 21 s.
# Enter a root with bubblewrap, read-only (tests/reach/reach_lib.sh: in_root).
# Needs root (debootstrap, chroot) and Debian's archive (the mirror of
# /etc/apt/sources.list.d/debian.sources; STOKER_DEBIAN_MIRROR overrides it).
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:$PATH
. "$(dirname "$0")/debian_archive.sh"

roots=${STOKER_ROOTS_DIR:-/var/cache/stoker/roots}
debs=${STOKER_ROOTS_DEBS:-$(dirname "$roots")/debs}
all_suites=(bullseye bookworm trixie sid)
# Bumped when the way a root is made changes (not its packages): every root is made again.
recipe_version=1

die() { echo "roots: $*" >&2; exit 1; }
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

# The packages of each root, beyond minbase. Every root: Python with numpy, venv and pip (the
# wheel's tests), Slurm's srun and headers, and what the plugin's package depends on (hwloc:
# sid's Slurm no longer pulls it in). bookworm and trixie: torch and
# torchvision (Debian has them there only). trixie also runs a one-node cluster (slurmctld,
# slurmd, munge) and builds the plugin-only tree from source with its own compiler.
packages() {
  local p=(python3 python3-numpy python3-venv python3-pip slurm-client libslurm-dev libhwloc15)
  case $1 in
    bookworm) p+=(python3-torch python3-torchvision) ;;
    trixie)
      p+=(python3-torch python3-torchvision slurmctld slurmd munge)
      p+=(build-essential cmake ninja-build pkgconf libhwloc-dev nlohmann-json3-dev)
      ;;
  esac
  echo "${p[@]}"
}

# The stamp: what the root is made of. Compared as text.
recipe() { printf 'suite %s\nrecipe %s\npackages %s\n' "$1" "$recipe_version" "$(packages "$1")"; }

complete() { [ -f "$roots/$1/.stoker-root" ] && [ "$(cat "$roots/$1/.stoker-root")" = "$(recipe "$1")" ]; }

prepare() {
  command -v debootstrap >/dev/null && return 0
  [ "$(id -u)" = 0 ] || die "debootstrap is not installed, and installing it needs root"
  # Waits for another apt-get (install-deps.sh) rather than failing on its lock.
  { apt-get -o DPkg::Lock::Timeout=900 update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
      --no-install-recommends debootstrap; } >/dev/null || die "apt-get install debootstrap failed"
}

# Runs a command in root DIR under chroot, in a private mount namespace with /proc, /dev and
# the suite's package cache mounted: the mounts vanish with the namespace, none reaches the host.
in_chroot() {
  local dir=$1 cache=$2
  shift 2
  # shellcheck disable=SC2016  # the inner script's variables are its own
  unshare --mount --propagation private sh -c '
    dir=$1 cache=$2; shift 2
    mount -t proc proc "$dir/proc" && mount --rbind /dev "$dir/dev" &&
      mount --bind "$cache" "$dir/var/cache/apt/archives" || exit 1
    exec chroot "$dir" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive "$@"' sh "$dir" "$cache" "$@"
}

# install_in_root DIR SUITE PACKAGE...: the root's own apt-get installs them; no daemon is
# started meanwhile (munge, slurmctld, slurmd: policy-rc.d says no). Logged in SUITE.log.
install_in_root() {
  local dir=$1 suite=$2 rc=0
  shift 2
  printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d" && chmod 755 "$dir/usr/sbin/policy-rc.d"
  in_chroot "$dir" "$debs/$suite" nice -n 19 sh -c 'apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends -o APT::Sandbox::User=root "$@"' sh \
    "$@" >>"$roots/$suite.log" 2>&1 || rc=$?
  rm -f "$dir/usr/sbin/policy-rc.d"
  return $rc
}

make_root() {
  local suite=$1 tmp=$roots/$1.tmp cache=$debs/$1 log=$roots/$1.log t0=$SECONDS
  mkdir -p "$cache/partial"
  rm -rf "$tmp"
  echo "roots: making $suite (log: $log)"
  # minbase plus apt's own needs; the rest by apt-get inside, which resolves alternatives and
  # virtual packages as a site's apt does. nice/ionice: it runs beside the build.
  nice -n 19 ionice -c 3 debootstrap --variant=minbase --cache-dir="$cache" "$suite" "$tmp" \
    "$(debian_mirror)" >"$log" 2>&1 || die "debootstrap $suite failed: $log"
  # The archive this machine reaches may serve a suite whose Release file has passed its
  # Valid-Until (a snapshot): apt inside the root then needs what the host's apt is told.
  echo "Acquire::Check-Valid-Until \"$(apt_check_valid_until)\";" \
    >"$tmp/etc/apt/apt.conf.d/99stoker-root"
  # shellcheck disable=SC2046  # the package list is words
  install_in_root "$tmp" "$suite" $(packages "$suite") ||
    die "apt-get install in the $suite root failed: $log"
  recipe "$suite" >"$tmp/.stoker-root"
  echo $((SECONDS - t0)) >"$tmp/.stoker-root-seconds"
  rm -rf "$roots/$suite" && mv "$tmp" "$roots/$suite"
  echo "roots: $suite made in $((SECONDS - t0)) s ($(du -sm "$roots/$suite" | cut -f1) MB)"
}

# A root whose recipe only gained packages gets them installed in place (minutes less than a
# remake); prints nothing and fails when it is not such a root or apt-get fails.
extend_root() {
  local suite=$1 dir=$roots/$1 have want added=()
  [ -f "$dir/.stoker-root" ] || return 1
  [ "$(sed -n '1,2p' "$dir/.stoker-root")" = "$(recipe "$suite" | sed -n '1,2p')" ] || return 1
  read -ra have <<<"$(sed -n 's/^packages //p' "$dir/.stoker-root")"
  for want in $(packages "$suite"); do
    [[ " ${have[*]} " == *" $want "* ]] || added+=("$want")
  done
  [ ${#added[@]} -gt 0 ] && [ $((${#have[@]} + ${#added[@]})) = "$(packages "$suite" | wc -w)" ] ||
    return 1
  echo "roots: adding ${added[*]} to $suite"
  install_in_root "$dir" "$suite" "${added[@]}" || return 1
  recipe "$suite" >"$dir/.stoker-root"
}

make_roots() {
  local suite failed=0
  [ $# -gt 0 ] || set -- "${all_suites[@]}"
  [ "$(id -u)" = 0 ] || die "making roots needs root (debootstrap, chroot)"
  prepare
  mkdir -p "$roots"
  for suite in "$@"; do
    packages "$suite" >/dev/null
    case " ${all_suites[*]} " in *" $suite "*) ;; *) die "unknown suite '$suite'" ;; esac
    (
      flock 9
      if complete "$suite"; then
        echo "roots: $suite is up to date ($roots/$suite, made in" \
          "$(cat "$roots/$suite/.stoker-root-seconds" 2>/dev/null || echo '?') s)"
      elif ! extend_root "$suite"; then
        make_root "$suite"
      fi
    ) 9>"$roots/.$suite.lock" || failed=1
  done
  return $failed
}

cmd=${1:-make}
case $cmd in
  make) shift || true; make_roots "$@" ;;
  path) [ $# = 2 ] || usage; complete "$2" && echo "$roots/$2" ;;
  packages) [ $# = 2 ] || usage; packages "$2" ;;
  prepare) prepare ;;
  -h|--help) usage ;;
  *) make_roots "$@" ;;
esac
