#!/bin/sh
# scripts/local-cluster.sh must never touch a Slurm config it did not write, nor a
# system folder. Usage: refuses_foreign_config.sh SCRIPT SCRATCH_DIR
set -u
script=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" || exit 1
printf 'ClusterName=someone-elses\n' >"$dir/slurm.conf"
fail() { echo "FAIL: $*" >&2; exit 1; }
for cmd in start stop; do
  "$script" "$cmd" "$dir" 2>"$dir/err" && fail "$cmd accepted a foreign slurm.conf"
  grep -q "not written by this script" "$dir/err" || fail "$cmd: no reason given: $(cat "$dir/err")"
done
[ "$(cat "$dir/slurm.conf")" = "ClusterName=someone-elses" ] || fail "the foreign slurm.conf changed"
[ "$(ls -A "$dir" | sort | tr '\n' ' ')" = "err slurm.conf " ] || fail "files were added: $(ls -A "$dir")"
"$script" start /etc/slurm/stoker-test 2>"$dir/err" && fail "start accepted /etc/slurm"
[ -e /etc/slurm/stoker-test ] && fail "created /etc/slurm/stoker-test"
grep -q "refusing" "$dir/err" || fail "no reason for /etc/slurm: $(cat "$dir/err")"
echo "ok: foreign config and system folders refused"
