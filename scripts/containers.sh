#!/usr/bin/env bash
# NVIDIA pyxis + enroot for the local test cluster (scripts/local-cluster.sh), so that
# `srun --container-image=IMAGE.sqsh` runs beside stoker's SPANK plugin as on a GPU site.
#
#   scripts/containers.sh install   # Debian packages, then pyxis and enroot from ../shared/vendor
#   scripts/containers.sh image     # builds the test image once; prints its path
#   scripts/containers.sh image-env # the image with STOKER_WORKERS=64 and OMP_NUM_THREADS=7 in
#       its own environment (/etc/environment), once; prints its path
#   scripts/containers.sh image-root # the image unpacked into a folder, once; prints its path
#       (the root bubblewrap runs in for the Apptainer-model tests: cluster.ApptainerModel.*)
#   scripts/containers.sh status    # rc 0 when both are installed (and the image exists); else why
#   scripts/containers.sh plugstack [DIR [ARG...]]  # prints pyxis's plugstack line; with DIR
#       (a scripts/local-cluster.sh cluster's folder) loads pyxis there, with pyxis's ARGs
#       (use_squashfuse=1: the tests' fast mode, see docs/containers-setup.md)
#
# Neither project is a Debian package: their release tarballs are in ../shared/vendor, whose
# README.md holds the build facts verified on Debian 12 (followed here step by step). Needs
# root. Everything built lives in /var/tmp/stoker-containers (override: STOKER_CONTAINERS_DIR);
# outside /tmp on purpose: node n2 of the local cluster has a private /tmp.
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/sbin:$PATH

pyxis_version=0.24.0
enroot_version=4.1.2
repo=$(cd "$(dirname "$0")/.." && pwd -P)
vendor=${STOKER_VENDOR_DIR:-$repo/../shared/vendor}
work=${STOKER_CONTAINERS_DIR:-/var/tmp/stoker-containers}
prefix=/usr/local
pyxis_so=$prefix/lib/slurm/spank_pyxis.so
image=$work/debian12-python.sqsh
env_image=$work/debian12-python-env.sqsh
image_root=$work/debian12-python-root
# What image-env's image sets in its own environment: a plan variable and a thread count, as
# an NGC image sets OMP_NUM_THREADS (the container tests check what the ranks get).
env_image_lines=("STOKER_WORKERS=64" "OMP_NUM_THREADS=7")
enroot_conf=$prefix/etc/enroot/enroot.conf.d/50-stoker-per-node.conf
# The line `plugstack DIR` writes to DIR/plugstack.conf.d/pyxis.conf (local-cluster.sh start
# --pyxis, the container tests). Slurm's include expands the glob sorted, so pyxis.conf comes
# before stoker.conf: pyxis's task_init runs first (it enters the container and sets the
# image's environment), then stoker's, so the plugin's STOKER_* variables win over an image's.
plugstack_line="required $pyxis_so"

die() { echo "containers: $*" >&2; exit 1; }
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

# Debian packages: build (makeself, linux-libc-dev, libbsd-dev, libslurm-dev) and run time
# (squashfs-tools, parallel, gawk, jq, pigz, libcap2-bin: enroot's documented run-time set;
# curl and zstd for enroot's checks on docker:// imports, which the tests do not use but
# enroot's docs list) and debootstrap for the image. make/gcc come with build-essential.
# squashfuse and fuse-overlayfs (enroot's optional set) let pyxis start a container straight
# from the .sqsh (use_squashfuse=1): 4.5 s a step instead of 18 s of unpacking it per node.
# bubblewrap stands in for Apptainer (not in Debian 12) in the Apptainer-model tests.
packages=(build-essential debootstrap squashfs-tools parallel gawk jq pigz libcap2-bin makeself
          linux-libc-dev libbsd-dev libslurm-dev curl zstd squashfuse fuse-overlayfs bubblewrap)

# The installed versions: pyxis's binary holds its PYXIS_VERSION string; enroot says its own.
installed_pyxis() {
  [ -f "$pyxis_so" ] && grep -aq "$pyxis_version" "$pyxis_so" && echo "$pyxis_version"
}
installed_enroot() { command -v enroot >/dev/null && enroot version 2>/dev/null; }

# Which of the two is missing or of another version; empty when both match.
missing() {
  local why=""
  [ "$(installed_pyxis || true)" = "$pyxis_version" ] ||
    why+="pyxis $pyxis_version not installed ($pyxis_so); "
  [ "$(installed_enroot || true)" = "$enroot_version" ] ||
    why+="enroot $enroot_version not installed; "
  [ -f "$enroot_conf" ] || why+="no per-node enroot config ($enroot_conf); "
  command -v squashfuse >/dev/null && command -v fuse-overlayfs >/dev/null ||
    why+="squashfuse or fuse-overlayfs missing; "
  echo "${why%; }"
}

install_packages() {
  local absent=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || absent+=("$p")
  done
  [ ${#absent[@]} -eq 0 ] && return 0
  echo "containers: apt-get install ${absent[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${absent[@]}" \
    >/dev/null
}

build_pyxis() {
  local src=$work/build/pyxis-$pyxis_version
  rm -rf "$src" && mkdir -p "$work/build"
  tar -xzf "$vendor/pyxis-$pyxis_version.tar.gz" -C "$work/build"
  # Against libslurm-dev's spank.h; installs spank_pyxis.so under $prefix/lib/slurm.
  nice -n 19 make -C "$src" -j1 >"$work/build/pyxis.log" 2>&1 ||
    die "pyxis build failed: $work/build/pyxis.log"
  make -C "$src" install prefix="$prefix" >>"$work/build/pyxis.log" 2>&1
}

build_enroot() {
  local src=$work/build/enroot-$enroot_version
  rm -rf "$src" && mkdir -p "$work/build"
  tar -xzf "$vendor/enroot-$enroot_version.tar.gz" -C "$work/build"
  # The tarball's submodule folders are empty (git archive). makeself: Debian's is the release
  # enroot pins (2.4.5). linux-headers: linux-libc-dev's headers are in /usr/include already, so
  # the submodule's install only needs to make the include folder enroot adds with -isystem.
  # musl: not built; FORCE_GLIBC=1 links the helpers against glibc instead.
  cp /usr/bin/makeself "$src/deps/makeself/makeself.sh"
  # shellcheck disable=SC2016  # $(prefix) is make's
  printf 'install:\n\tmkdir -p $(prefix)/include\n' >"$src/deps/linux-headers/Makefile"
  # glibc 2.36 has no strlcpy/strlcat (enroot-mount needs them): libbsd-dev's, by its header
  # and its static library named by path; a plain -lbsd would find enroot's own partial
  # deps/dist/libbsd/libbsd.a first and still miss them.
  CPPFLAGS="-D_GNU_SOURCE= -include bsd/string.h" nice -n 19 make -C "$src" -j1 FORCE_GLIBC=1 \
    "LDLIBS=-l:libbsd.a /usr/lib/x86_64-linux-gnu/libbsd.a" >"$work/build/enroot.log" 2>&1 ||
    die "enroot build failed: $work/build/enroot.log"
  make -C "$src" install prefix="$prefix" FORCE_GLIBC=1 >>"$work/build/enroot.log" 2>&1
  # enroot's docs: `make setcap` lets unprivileged users import images (docker://, not needed
  # for .sqsh files, but what a site installs).
  make -C "$src" setcap prefix="$prefix" >>"$work/build/enroot.log" 2>&1
}

# Two emulated nodes on one host: pyxis names a step's container pyxis_<job>.<step> on every
# node, and enroot's default state folders (/run/enroot, ~/.cache/enroot,
# ~/.local/share/enroot) are shared by n1 and n2, so the second node's `enroot create` finds
# the first's container. Under /tmp they are per node: local-cluster.sh gives n2 a private
# /tmp (n1 has the host's). Job ids of different clusters differ (FirstJobId), so two
# clusters' n1 do not collide either. A job's own ENROOT_*_PATH variables still win.
write_enroot_conf() {
  mkdir -p "$(dirname "$enroot_conf")"
  cat >"$enroot_conf" <<'EOF'
# Written by stoker's scripts/containers.sh: enroot state per emulated Slurm node (under
# each slurmd's /tmp; node n2 of scripts/local-cluster.sh has a private one).
ENROOT_RUNTIME_PATH /tmp/enroot-$(id -u)/runtime
ENROOT_CACHE_PATH   /tmp/enroot-$(id -u)/cache
ENROOT_DATA_PATH    /tmp/enroot-$(id -u)/data
EOF
}

install() {
  [ "$(id -u)" = 0 ] || die "install needs root (apt-get, /usr/local)"
  install_packages  # quick when all are there
  if [ -z "$(missing)" ]; then
    echo "containers: pyxis $pyxis_version and enroot $enroot_version already installed"
    return 0
  fi
  local t
  for t in pyxis-$pyxis_version.tar.gz enroot-$enroot_version.tar.gz; do
    [ -f "$vendor/$t" ] || die "$vendor/$t: missing (the release tarballs live in shared/vendor)"
  done
  [ "$(installed_pyxis || true)" = "$pyxis_version" ] || build_pyxis
  [ "$(installed_enroot || true)" = "$enroot_version" ] || build_enroot
  write_enroot_conf
  local why
  why=$(missing)
  [ -z "$why" ] || die "after install: $why"
  echo "containers: installed pyxis $pyxis_version ($pyxis_so)" \
    "and enroot $enroot_version ($(command -v enroot))"
}

# A minimal Debian 12 root with python3 and numpy and nothing of stoker (no package, none of
# its native libraries: hwloc, libjpeg, libwebp, Open MPI), as a squashfs that
# `srun --container-image=` takes directly. dev/* is left out: with debootstrap's device nodes
# in the image, a non-root `enroot create` fails. Built once; delete the file to rebuild.
image() {
  if [ -f "$image" ]; then echo "$image"; return 0; fi
  [ "$(id -u)" = 0 ] || die "image needs root (debootstrap)"
  if ! command -v debootstrap >/dev/null || ! command -v mksquashfs >/dev/null; then
    die "debootstrap or mksquashfs missing: run $0 install"
  fi
  local root=$work/debian12-root mirror
  mirror=${STOKER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  rm -rf "$root" && mkdir -p "$work"
  nice -n 19 debootstrap --variant=minbase --include=python3,python3-numpy bookworm "$root" \
    "$mirror" >"$work/debootstrap.log" 2>&1 || die "debootstrap failed: $work/debootstrap.log"
  # Checks that the image is what the tests assume.
  chroot "$root" python3 -c 'import numpy' || die "numpy does not import in the image"
  if chroot "$root" sh -c 'ls /usr/lib/*/libhwloc.so* /usr/lib/python3/dist-packages/stoker' \
    >/dev/null 2>&1; then
    die "the image holds stoker or hwloc; it must not"
  fi
  # debootstrap leaves its downloaded .debs and apt's package lists in the root (~100 MB, half
  # the image, and mksquashfs's -noD stores data blocks uncompressed); every step unpacks the
  # image on each node (enroot create), so they cost seconds there. Images do without them.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  rm -f "$image.new"
  nice -n 19 mksquashfs "$root" "$image.new" -comp lzo -noD -wildcards -e 'dev/*' \
    >"$work/mksquashfs.log" 2>&1 || die "mksquashfs failed: $work/mksquashfs.log"
  mv "$image.new" "$image"
  rm -rf "$root"
  echo "$image"
}

# The image with variables in its own environment. enroot takes a .sqsh image's environment
# from its /etc/environment (enroot's runtime.sh: `common::envsubst "$rootfs/etc/environment"`;
# `enroot import` of a docker:// image writes the image's ENV there), and pyxis copies the
# started container's environment into the task's (spank_import_container_env). Unpacked
# from the image, the lines appended, packed again the same way (~20 s, once).
image_env() {
  if [ -f "$env_image" ]; then echo "$env_image"; return 0; fi
  [ "$(id -u)" = 0 ] || die "image-env needs root (the image's files are root's)"
  local base root=$work/debian12-env-root
  base=$(image)
  rm -rf "$root" && mkdir -p "$work"
  unsquashfs -q -d "$root" "$base" >/dev/null || die "unsquashfs of $base failed"
  printf '%s\n' "${env_image_lines[@]}" >>"$root/etc/environment"
  rm -f "$env_image.new"
  nice -n 19 mksquashfs "$root" "$env_image.new" -comp lzo -noD >"$work/mksquashfs-env.log" \
    2>&1 || die "mksquashfs failed: $work/mksquashfs-env.log"
  mv "$env_image.new" "$env_image"
  rm -rf "$root"
  echo "$env_image"
}

# The image's files in a folder (an Apptainer sandbox's form), for bubblewrap's --ro-bind
# ROOT /. Unpacked once (a few seconds); the marker file says it is whole.
image_root() {
  if [ -f "$image_root/.stoker-image-root" ]; then echo "$image_root"; return 0; fi
  [ "$(id -u)" = 0 ] || die "image-root needs root (the image's files are root's)"
  local base
  base=$(image)
  rm -rf "$image_root" "$image_root.tmp"
  unsquashfs -q -d "$image_root.tmp" "$base" >/dev/null || die "unsquashfs of $base failed"
  mkdir -p "$image_root.tmp/dev" "$image_root.tmp/share" "$image_root.tmp/opt/stoker"
  touch "$image_root.tmp/.stoker-image-root"
  mv "$image_root.tmp" "$image_root"
  echo "$image_root"
}

# Loads pyxis in the local cluster in DIR beside stoker (its plugstack.conf includes
# DIR/plugstack.conf.d/*.conf, re-read at each launch). pyxis's slurmd hook makes its
# runtime_path (/run/pyxis) when slurmd starts with pyxis loaded; added to a running cluster it
# never ran, and every step would fail on mkdir /run/pyxis/<uid>: make it here.
plugstack() {
  local dir=$1 why
  shift
  why=$(missing)
  [ -z "$why" ] || die "$why (run $0 install)"
  [ -d "$dir/plugstack.conf.d" ] || die "$dir: no local cluster there (plugstack.conf.d missing)"
  [ -d /run/pyxis ] || mkdir -m 0755 /run/pyxis
  echo "$plugstack_line${*:+ $*}" >"$dir/plugstack.conf.d/pyxis.conf"
}

status() {
  local why
  why=$(missing)
  [ -f "$image" ] || why+="${why:+; }no image $image (run $0 image)"
  if [ -n "$why" ]; then echo "$why"; return 1; fi
  echo "pyxis $pyxis_version, enroot $enroot_version, image $image"
}

[ $# -ge 1 ] || usage
case $1 in
  install) install ;;
  image) image ;;
  image-env) image_env ;;
  image-root) image_root ;;
  status) status ;;
  plugstack) if [ $# -ge 2 ]; then shift; plugstack "$@"; else echo "$plugstack_line"; fi ;;
  *) usage ;;
esac
