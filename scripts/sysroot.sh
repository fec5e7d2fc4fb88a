#!/usr/bin/env bash
# A Debian 11 (bullseye, glibc 2.31) sysroot that the host's GCC 12 builds stoker against
# (cmake/toolchain-bullseye.cmake), so that what it builds runs on glibc 2.31 and later: the
# SPANK plugin for every Slurm release, the `stoker` command, and later the wheel.
#
#   scripts/sysroot.sh          make it when missing or out of date; print its folder
#   scripts/sysroot.sh path     print its folder when complete; exit 1 when it is not
#
# /var/cache/stoker/sysroot-bullseye (STOKER_SYSROOT). Not a root to run in: the packages are
# resolved by apt from bullseye's index (an apt of its own, with an empty dpkg status, so
# every dependency down to libc6 comes along), downloaded and unpacked with dpkg -x, each
# recorded in the sysroot's own dpkg database (var/lib/dpkg: status and file lists, for
# `dpkg -S --admindir`; the packages' scripts are not run). What
# stoker builds against: libc6-dev, hwloc, libjpeg62-turbo (and turbojpeg), libpng, libwebp,
# zlib, zstd, nlohmann-json, Open MPI's mpi.h (libmpi is loaded at run time). bullseye has no
# CLI11: bookworm's header-only package is unpacked into it. libjpeg-turbo is bookworm's too
# (2.1.5, which needs GLIBC_2.14 only): from 2.1 on, the block smoothing of an incomplete
# (truncated) progressive JPEG changed, and PIL decodes with 2.1 or later nearly everywhere the
# wheel goes (Debian 12+, Ubuntu 22.04+, RHEL 9, PyPI's Pillow): with bullseye's 2.0.6 those
# files decoded up to 4 levels away from PIL's. Then the root's absolute
# symbolic links are made relative: ld follows /lib/... to the HOST's glibc otherwise, and the
# output silently needs GLIBC_2.34 (../shared/notes/debian-roots.md).
# Made in SYSROOT.tmp and moved in place when complete; the stamp (.stoker-sysroot) is the
# package list: a changed list remakes it. Needs apt-get and dpkg (not root: the folder must
# be writable); Debian's archive (the mirror of /etc/apt/sources.list.d/debian.sources).
set -euo pipefail
. "$(dirname "$0")/debian_archive.sh"

sysroot=${STOKER_SYSROOT:-/var/cache/stoker/sysroot-bullseye}
suite=bullseye
packages=(libc6-dev libhwloc-dev libjpeg62-turbo-dev libturbojpeg0-dev
          libpng-dev libwebp-dev zlib1g-dev libzstd-dev nlohmann-json3-dev libopenmpi-dev
          base-files)  # base-files: /usr/share/common-licenses, which copyright files cite
# Taken from bookworm (the host's suite), each alone (their dependencies are bullseye's, met
# above): CLI11 (header only), which bullseye lacks, and libjpeg-turbo 2.1 (see above), which
# stands in for bullseye's packages of the same names.
bookworm_packages=(libcli11-dev libjpeg62-turbo libjpeg62-turbo-dev)
# Bumped when the way the sysroot is made changes.
recipe_version=3  # 2: only the resolved packages are unpacked; 3: a dpkg database, bookworm's named packages alone

die() { echo "sysroot: $*" >&2; exit 1; }

recipe() {
  printf 'suite %s\nrecipe %s\npackages %s\nbookworm %s\n' "$suite" "$recipe_version" \
    "${packages[*]}" "${bookworm_packages[*]}"
}
complete() { [ -f "$sysroot/.stoker-sysroot" ] && [ "$(cat "$sysroot/.stoker-sysroot")" = "$(recipe)" ]; }

# An apt of its own for SUITE under DIR: its index, its empty dpkg status, its downloads.
# APT_CONFIG, not -o: the host's apt.conf.d and sources must not be read at all.
apt_of() {
  local dir=$1 suite=$2
  mkdir -p "$dir"/{lists/partial,archives/partial,etc/apt.conf.d,etc/preferences.d,etc/sources.list.d}
  : >"$dir/status"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) $suite main" >"$dir/etc/sources.list"
  cat >"$dir/apt.conf" <<EOF
Dir::Etc "$dir/etc";
Dir::State "$dir";
Dir::State::status "$dir/status";
Dir::State::Lists "$dir/lists";
Dir::Cache "$dir";
Dir::Cache::archives "$dir/archives";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Install-Recommends "false";
APT::Sandbox::User "root";
Debug::NoLocking "true";
Acquire::Check-Valid-Until "$(apt_check_valid_until)";
EOF
}

# record DEB ROOT: what dpkg would have recorded had it installed DEB into ROOT (its status
# stanza and its file list), so that `dpkg -S --admindir=ROOT/var/lib/dpkg` names the package
# of a file in the sysroot and dpkg-query its version: scripts/wheel.py --sysroot lists each
# bundled library's package, version and copyright file that way.
record() {
  local deb=$1 db=$2/var/lib/dpkg pkg list
  mkdir -p "$db/info"
  echo 1 >"$db/info/format"  # file lists named PACKAGE:ARCH for Multi-Arch: same packages
  pkg=$(dpkg-deb -f "$deb" Package)
  list=$pkg
  [ "$(dpkg-deb -f "$deb" Multi-Arch)" != same ] || list=$pkg:$(dpkg-deb -f "$deb" Architecture)
  { dpkg-deb -f "$deb" | sed '1a Status: install ok unpacked'; echo; } >>"$db/status"
  dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|^/$|/.|' -e 's|\(.\)/$|\1|' \
    >"$db/info/$list.list"
}

# resolved APT_DIR PACKAGE...: the downloaded .deb of every package an install of PACKAGEs
# takes (apt-get -s: "Inst libc6 (2.31-13+deb11u11 Debian:11.11/... [amd64])"), as apt names
# the files (an epoch's ':' as %3a).
resolved() {
  local dir=$1
  shift
  APT_CONFIG=$dir/apt.conf apt-get -s install "$@" | awk -v d="$dir/archives" '
    /^Inst / { v = $3; sub(/^\(/, "", v); sub(/:/, "%3a", v)
               if (match($0, /\[[a-z0-9]+\]\)/)) print d "/" $2 "_" v "_" substr($0, RSTART + 1, RLENGTH - 3) ".deb" }'
}

# named APT_DIR PACKAGE...: the downloaded .deb of each PACKAGE itself (apt-get download's
# file; --print-uris: "'URI' FILE SIZE HASH"), none of its dependencies.
named() {
  local dir=$1
  shift
  APT_CONFIG=$dir/apt.conf apt-get download --print-uris "$@" |
    awk -v d="$dir/archives" '{ print d "/" $2 }'
}

make_sysroot() {
  local tmp=$sysroot.tmp apt apt_host deb
  apt=$(dirname "$sysroot")/apt-$suite apt_host=$(dirname "$sysroot")/apt-bookworm
  rm -rf "$tmp" && mkdir -p "$tmp"
  apt_of "$apt" "$suite"
  APT_CONFIG=$apt/apt.conf apt-get -qq update || die "apt-get update for $suite failed"
  # The download folder is kept: a remade sysroot downloads only what changed. What is
  # unpacked is what apt resolves now (its simulated install's files), never an older list's
  # leftovers there.
  APT_CONFIG=$apt/apt.conf apt-get -qq install -y --download-only "${packages[@]}" >/dev/null ||
    die "resolving ${packages[*]} in $suite failed"
  apt_of "$apt_host" bookworm
  APT_CONFIG=$apt_host/apt.conf apt-get -qq update || die "apt-get update for bookworm failed"
  (cd "$apt_host/archives" && APT_CONFIG=$apt_host/apt.conf apt-get -qq download \
    "${bookworm_packages[@]}") || die "downloading ${bookworm_packages[*]} failed"
  # bullseye's packages but those bookworm's stand in for, then bookworm's.
  local skip
  skip=$(printf '/%s_[^/]*$|' "${bookworm_packages[@]}")
  for deb in $(resolved "$apt" "${packages[@]}" | grep -Ev "${skip%|}") \
    $(named "$apt_host" "${bookworm_packages[@]}"); do
    dpkg -x "$deb" "$tmp"
    record "$deb" "$tmp"
  done
  # Absolute links into the root itself (libm.so -> /lib/x86_64-linux-gnu/libm.so.6) made
  # relative, so that they stay inside it whatever folder it is in.
  find "$tmp" -type l -lname '/*' -print0 | while IFS= read -r -d '' link; do
    ln -sfn "$(realpath -m -s --relative-to="$(dirname "$link")" "$tmp$(readlink "$link")")" "$link"
  done
  recipe >"$tmp/.stoker-sysroot"
  rm -rf "$sysroot" && mv "$tmp" "$sysroot"
}

case ${1:-make} in
  path) complete && echo "$sysroot" ;;
  make)
    if ! complete; then
      mkdir -p "$(dirname "$sysroot")"
      (
        flock 9
        complete || make_sysroot
      ) 9>"$sysroot.lock"
    fi
    echo "$sysroot"
    ;;
  *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
