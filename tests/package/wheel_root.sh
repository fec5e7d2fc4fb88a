#!/usr/bin/env bash
# The wheel in a root that has none of stoker's native libraries (ctest package.wheel_root), as
# in a container image: a Debian 12 minbase root with python3 and python3-numpy only, unpacked
# once from scripts/containers.sh's image and kept (STOKER_WHEEL_ROOT, default
# /var/tmp/stoker-wheel-root). The wheel goes
# into a venv inside the root, unpacked by wheel_install.py (the root has no pip); then, under
# chroot in a private mount namespace with the host's /proc, /sys and /dev:
#   python -c 'import stoker; print(stoker.plan())'   and   stoker plan / plan --json / doctor
# must work. Without the bundled libraries the import fails there with
# "libhwloc.so.15: cannot open shared object file", as in a container image without them.
# Then a rank launched
# under MPI (srun --mpi=pmix's PMIX_* and mpirun's OMPI_COMM_WORLD_* set) in this root, which
# has no Open MPI, makes a stoker.Loader: it must train and exit 0 with one line saying MPI is
# not usable here (the wheel bundles no MPI; stoker loads the image's libmpi.so.40 when there
# is one). A wheel that bundled libmpi ended it with exit 1 in MPI_Init_thread.
#
#   wheel_root.sh DIR    DIR holds the wheel (package.wheel's output folder)
#
# Needs root, chroot and unshare (util-linux), and the image while the root is not made yet.
# Exit 77 when one is missing. The root is left as it was: the venv is removed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
whl=$(ls "$1"/stoker-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || { echo "SKIP: no wheel in $1 (package.wheel makes it)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: chroot needs root"; exit 77; }
for t in chroot unshare; do
  command -v $t >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
root=${STOKER_WHEEL_ROOT:-/var/tmp/stoker-wheel-root}

# The root, made once from the container tests' image (scripts/containers.sh image: the same
# Debian 12 minbase with python3 and numpy, one debootstrap for both), unpacked aside and
# moved in place when complete, so that an interrupted unpack is never mistaken for a root.
if [ ! -f "$root/.stoker-wheel-root" ]; then
  command -v unsquashfs >/dev/null \
    || { echo "SKIP: unsquashfs is not installed (scripts/containers.sh install)"; exit 77; }
  image=$("$here/../../scripts/containers.sh" image) \
    || { echo "SKIP: no image (scripts/containers.sh install, then image)"; exit 77; }
  rm -rf "$root.tmp"
  unsquashfs -q -d "$root.tmp" "$image" >/dev/null
  mkdir -p "$root.tmp/dev" "$root.tmp/proc" "$root.tmp/sys"
  touch "$root.tmp/.stoker-wheel-root"
  rm -rf "$root" && mv "$root.tmp" "$root"
fi

# The root must lack what the wheel bundles, or the test proves nothing.
found=$(find "$root/usr/lib" "$root/usr/local" \( -name 'libhwloc.so*' -o -name 'libmpi.so*' \
  -o -name 'libjpeg.so*' -o -name 'libpng16.so*' -o -name 'libwebp.so*' \
  -o -name 'libopen-pal.so*' -o -path '*/stoker/libstoker*' \) 2>/dev/null | head -n 3)
[ -z "$found" ] || { echo "FAIL: $root holds stoker's libraries: $found"; exit 1; }

inside=/tmp/stoker-wheel.$$  # the venv's path as the root sees it
trap 'rm -rf "$root$inside"' EXIT
venv=$root$inside/venv
# The root's own python3 makes the venv, so that the paths in it are the root's.
chroot "$root" /usr/bin/python3 -m venv --without-pip "$inside/venv"
site=$(echo "$venv"/lib/python3.*/site-packages)
/usr/bin/python3 "$here/wheel_install.py" "$whl" "$site" "$venv/bin" "$inside/venv/bin/python" \
  >/dev/null
echo "installed $(basename "$whl") into $root's venv $inside/venv"

# chroot in a private mount namespace: the mounts vanish with it, none reaches the host.
in_root() {
  # shellcheck disable=SC2016  # the inner script's variables are its own
  unshare --mount --propagation private sh -c '
    root=$1; shift
    mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" &&
      mount --rbind /dev "$root/dev"
    exec chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root "$@"' sh "$root" "$@"
}
out=$(in_root "$inside/venv/bin/python" -c '
import sys, stoker
assert "torch" not in sys.modules, "import stoker imported torch"
print(stoker.plan())' 2>&1) || { echo "FAIL: import stoker in the root:"; echo "$out"; exit 1; }
echo "chroot: import stoker; stoker.plan() works:"; echo "$out" | head -n 3
for args in "plan" "plan --json"; do
  # shellcheck disable=SC2086  # $args is the subcommand's words
  out=$(in_root "$inside/venv/bin/stoker" $args 2>&1) \
    || { echo "FAIL: 'stoker $args' in the root:"; echo "$out"; exit 1; }
  echo "chroot: stoker $args works ($(echo "$out" | wc -l) lines)"
done
# doctor exits 1 on an error finding about this machine (that is not the wheel's to pass);
# it must run and report, not fail to start (127: a library missing).
rc=0; out=$(in_root "$inside/venv/bin/stoker" doctor 2>&1) || rc=$?
case $rc:$out in
  [01]:*checks:*) echo "chroot: stoker doctor runs (exit $rc): $(echo "$out" | tail -n 1)" ;;
  *) echo "FAIL: 'stoker doctor' in the root (exit $rc):"; echo "$out"; exit 1 ;;
esac

# A rank launched under MPI in a root without Open MPI: the loader runs, one line says why MPI
# is not used, and the rank is not ended (Open MPI's MPI_Init_thread failure is fatal).
# The root's python3 with the venv's site-packages on its path: numpy is the image's own.
printf 'x%.0s' $(seq 1 2048) >"$root$inside/tokens.bin"  # 1024 uint16 tokens
rc=0; out=$(in_root PYTHONPATH="${site#"$root"}" PMIX_RANK=0 PMIX_NAMESPACE=slurm.pmix.35.0 OMPI_COMM_WORLD_SIZE=2 \
  OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_LOCAL_SIZE=2 \
  /usr/bin/python3 -c '
import sys, stoker
loader = stoker.Loader.tokens(sys.argv[1], seq_len=16, batch_size=4, as_numpy=True)
batches = sum(1 for _ in loader)
assert batches > 0, batches
print("trained", batches, "batches; agreement:", loader.stats()["agreement"])
' "$inside/tokens.bin" 2>&1) || rc=$?
lines=$(echo "$out" | grep -c "^stoker: .*MPI is not usable here" || true)
if [ "$rc" != 0 ] || [ "$lines" != 1 ] || ! echo "$out" | grep -q "^trained"; then
  echo "FAIL: a stoker.Loader under an MPI launcher in the root (exit $rc, $lines MPI lines):"
  echo "$out" | tail -n 20; exit 1
fi
echo "chroot: a loader under PMIX_RANK/OMPI_COMM_WORLD_SIZE runs without MPI (exit 0):"
echo "$out"
