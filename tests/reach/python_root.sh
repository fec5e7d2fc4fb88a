#!/usr/bin/env bash
# reach.faults_wheel_SUITE: the wheel (scripts/package.sh --only wheel: reach.faults_sysroot_build)
# in the SUITE root (CPython 3.9, 3.11, 3.13 or 3.14; glibc 2.31 to 2.4x), which holds none of
# stoker's packages or files: entered read-only with bubblewrap, the root's own python3 runs
# tests/reach/python_venv.py (a fresh venv, pip install offline, the module, its loaders and
# its command; with Debian's torch: DistributedSampler, a 2-rank gloo job, and stoker beside
# torchvision). Main's earlier wheels failed here: the cp311 one in every root but bookworm
# ("not a supported wheel on this platform"), the py3 one built on Debian 12
# (manylinux_2_36) in bullseye.
#
#   tests/reach/python_root.sh SUITE WHEEL_DIR MAKE_DATA WORK_DIR
#
# MAKE_DATA: the build's stoker_make_data (JPEG class folders). The real-file corpus
# (tests/corpus/corpus.py; STOKER_CORPUS_DIR) joins the torchvision check when this machine
# has fetched it. Exit status: 0 passed; 1 a check failed; 77 skipped (no root, no wheel).
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 4 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
suite=$1 wheels=$2 make_data=$3 work=$4
root_of "$suite"; root=$REPLY
whl=$(ls "$wheels"/stoker-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || skip "no wheel in $wheels (reach.faults_sysroot_build makes it)"
[ -x "$make_data" ] || skip "no $make_data (the build's stoker_make_data)"
rm -rf "$work" && mkdir -p "$work/data" "$work/tests" "$work/corpus"
cp "$whl" "$work/"
"$make_data" images "$work/data/images" --classes 3 --per-class 8 --width 48 --height 40 >/dev/null

# hwloc reads /sys; the test's scripts and the corpus come read-only under /mnt (WORK_DIR; a
# read-only root may lack /srv, and bubblewrap cannot make a folder in it).
BWRAP_EXTRA=(--ro-bind /sys /sys --ro-bind "$reach_src/tests" /mnt/tests)
corpus=${STOKER_CORPUS_DIR:-/var/cache/stoker-corpus}
[ ! -d "$corpus/root" ] || BWRAP_EXTRA+=(--ro-bind "$corpus" /mnt/corpus)
in_root "$root" "$work" env STOKER_CORPUS_DIR=/mnt/corpus \
  python3 /mnt/tests/reach/python_venv.py "/mnt/$(basename "$whl")" /mnt/data
