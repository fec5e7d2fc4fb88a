#!/usr/bin/env bash
# Installs the three .debs of scripts/package.sh into a fresh root with dpkg, enables the
# installed plugin the way an admin does (the '#' off the shipped plugstack line), and runs
# jobs with it on the local two-node cluster: the tasks get the plugin's plan, and the
# installed `stoker` command and Python module read it.
#
#   tests/package/installed_plugin.sh DEBS_DIR CLUSTER_DIR BUILD_PLUGIN
#
# CLUSTER_DIR   a running cluster of scripts/local-cluster.sh (the ctest fixture); with
#               CLUSTER_DIR/skip-reason present the test skips (exit 77)
# BUILD_PLUGIN  the build's spank_stoker.so: the cluster's plugstack line goes back to it
#               (no arguments, as cluster.start leaves it) when the test ends
# The root is CLUSTER_DIR/jobs/package-root: outside /tmp, as node n2 has a private /tmp.
# The root has no dpkg database of its own, so dpkg installs with --force-depends; the
# Depends are checked against this machine by tests/package/contents.sh.
# Exit status: 0 passed; 1 a check failed (the output is printed); 77 skipped.
set -euo pipefail
[ $# -eq 3 ] || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
debs=$(cd "$1" && pwd -P)
cluster=$(cd "$2" && pwd -P)
build_plugin=$(realpath "$3")
src=$(cd "$(dirname "$0")/../.." && pwd -P)
export PATH=/usr/sbin:/sbin:$PATH
if [ -f "$cluster/skip-reason" ]; then
  echo "SKIP: no local cluster: $(cat "$cluster/skip-reason")"
  exit 77
fi
export SLURM_CONF=$cluster/slurm.conf
"$(dirname "$0")/../../scripts/local-cluster.sh" clear "$cluster"  # jobs an earlier test left
plugstack=$cluster/plugstack.conf.d/stoker.conf
trap 'echo "optional $build_plugin" >"$plugstack"' EXIT
failures=0
check() {  # check NAME REGEX TEXT
  if grep -qE -- "$2" <<<"$3"; then echo "ok   $1"; else
    echo "FAIL $1: no /$2/ in:"; echo "$3" | tail -n 20; failures=$((failures + 1)); fi
}

# A fresh root with an empty dpkg database, then the packages.
root=$cluster/jobs/package-root
rm -rf "$root"
mkdir -p "$root"/var/lib/dpkg/{info,updates,triggers}
touch "$root"/var/lib/dpkg/{status,available}
dpkg --root="$root" --force-depends -i "$debs"/stoker-slurm-plugin_*.deb "$debs"/stoker_*.deb \
  "$debs"/python3-stoker_*.deb >"$root.log" 2>&1 || { cat "$root.log"; exit 1; }
for p in stoker-slurm-plugin stoker python3-stoker; do
  check "dpkg installed $p" '^Status: install ok installed$' "$(dpkg --root="$root" --status $p)"
done
check "dpkg knows the conffile" '/etc/slurm/plugstack.conf.d/stoker.conf [0-9a-f]{32}' \
  "$(dpkg --root="$root" --status stoker-slurm-plugin)"

# Shipped disabled: the installed command sees no active line and lists the built-ins.
stoker=$root/usr/bin/stoker conf=$root/etc/slurm/plugstack.conf.d/stoker.conf
check "shipped disabled" 'has no active line for spank_stoker.so' \
  "$("$stoker" plan --list --plugstack "$conf" 2>&1)"

# Enable it as an admin would (the installed path is under the root here).
sed -i -E "s|^#optional /usr/|optional $root/usr/|" "$conf"
check "enabled line" "^optional $root/usr/lib/.*/spank_stoker.so enable=opt-in\$" "$(cat "$conf")"
cp "$conf" "$plugstack"
check "list after enabling" 'names no profiles file' \
  "$("$stoker" plan --list --plugstack "$conf" 2>&1)"

# A job: two ranks on each node get the installed plugin's plan.
work=$cluster/jobs/package
mkdir -p "$work"
cd "$work"
out=$(timeout 120 srun -N2 -n4 --stoker-profile=cv "$src/tests/cluster/probe.sh" 2>&1) || true
for r in 0 1 2 3; do check "rank $r planned by the installed plugin" "^$r STOKER_PROFILE=cv\$" "$out"; done
check "four plans" '^3 STOKER_PLAN_VERSION=1$' "$out"

# The installed command and module read the plan inside a task.
out=$(timeout 60 srun -n1 --stoker-profile=nlp "$stoker" plan --json 2>&1) || true
check "installed stoker reads the plugin's plan" '"source": "the STOKER_\* environment' "$out"
check "its profile" '"profile": "nlp"' "$out"
py="import stoker, sys; assert stoker.__file__.startswith(sys.argv[1]), stoker.__file__; p = stoker.plan(); print('module', stoker.__file__, 'profile', p.profile, 'source', p.source)"
out=$(timeout 60 srun -n1 --stoker-profile=cv env PYTHONPATH="$root/usr/lib/python3/dist-packages" \
  /usr/bin/python3 -c "$py" "$root" 2>&1) || true
check "installed module reads the plugin's plan" "^module $root/.* profile cv source .*STOKER" "$out"

[ $failures = 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "the installed packages ran jobs on the local cluster"
