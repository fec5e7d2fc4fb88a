# Sourced by the reach tests (tests/reach/*.sh): the Debian roots of scripts/roots.sh, the
# plugin packages built for them, and running a command inside a root.
# shellcheck shell=bash
reach_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
export PATH=/usr/sbin:/sbin:$PATH
failures=0
BWRAP_EXTRA=()

skip() { echo "SKIP: $*"; exit 77; }
check() {  # check NAME REGEX TEXT
  if grep -qE -- "$2" <<<"$3"; then echo "ok   $1"; else
    echo "FAIL $1: no /$2/ in:"; echo "$3" | tail -n 25; failures=$((failures + 1)); fi
}
check_not() {  # check_not NAME REGEX TEXT
  if ! grep -qE -- "$2" <<<"$3"; then echo "ok   $1"; else
    echo "FAIL $1: /$2/ in:"; echo "$3" | tail -n 25; failures=$((failures + 1)); fi
}
finish() {
  [ "$failures" = 0 ] || { echo "$failures check(s) failed"; exit 1; }
  echo "passed"
}

# A CPU list ("0-2,5") one CPU a line, sorted as text (for comm).
cpulist() { tr ',' '\n' <<<"$1" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | sort; }

# The complete root of SUITE into $REPLY, or skip with the reason (not in $(...): a skip
# there would end the subshell only).
root_of() {
  REPLY=$("$reach_src/scripts/roots.sh" path "$1") ||
    skip "no complete $1 root in ${STOKER_ROOTS_DIR:-/var/cache/stoker/roots}: scripts/roots.sh make $1 (root, Debian's archive)"
}

# The plugin package reach.plugin_SUITE built (PLUGINS/SUITE/*.deb), unpacked into
# WORK/unpacked-SUITE, the calling test's own folder (tests running at once take the same
# package: one's unpack removed the other's file under it); its spank_stoker.so into $REPLY,
# or skip.
plugin_of() {
  local plugins=$1 suite=$2 dest=$3/unpacked-$2 deb
  deb=$(ls "$plugins/$suite"/stoker-slurm-plugin_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || skip "no plugin package built for $suite in $plugins/$suite (reach.plugin_$suite)"
  rm -rf "$dest"
  dpkg-deb -x "$deb" "$dest"
  REPLY=$(find "$dest" -name spank_stoker.so | head -n 1)
}

# The Slurm release a root runs, "24.11.5": its srun's own answer, with the slurm.conf of
# write_srun_conf in DIR (without one, srun looks for a configuration server first).
slurm_of() { in_root "$1" "$2" env SLURM_CONF=/mnt/slurm.conf srun --version | awk '{print $2}'; }

# in_root ROOT MNT COMMAND...: runs COMMAND in ROOT, read-only, with bubblewrap: its own
# /proc, /dev, /tmp and /run, host folder MNT (when not "") at /mnt, a clean environment.
# BWRAP_EXTRA (an array, optional) adds bwrap arguments (a writable folder, a hostname).
in_root() {
  local root=$1 mnt=$2
  shift 2
  command -v bwrap >/dev/null || skip "bubblewrap is not installed (scripts/install-deps.sh)"
  local args=(--ro-bind "$root" / --proc /proc --dev /dev --tmpfs /tmp --tmpfs /run
              --unshare-pid --die-with-parent)
  [ -z "$mnt" ] || args+=(--bind "$mnt" /mnt)
  bwrap "${args[@]}" "${BWRAP_EXTRA[@]}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/tmp LC_ALL=C.UTF-8 "$@"
}

# A slurm.conf for `srun --help` in a root (no daemon: srun reads it and loads the plugstack),
# and the plugstack line loading PLUGIN, in folder DIR (seen as /mnt in the root).
write_srun_conf() {
  local dir=$1 plugin=$2
  mkdir -p "$dir"
  cp "$plugin" "$dir/spank_stoker.so"
  cat >"$dir/slurm.conf" <<'EOF'
ClusterName=reach
SlurmctldHost=localhost
AuthType=auth/munge
PlugStackConfig=/mnt/plugstack.conf
NodeName=localhost CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES State=UP
EOF
  echo "optional /mnt/spank_stoker.so" >"$dir/plugstack.conf"
}
