#!/usr/bin/env bash
# scripts/as-root.sh, the front door of scripts/test.sh, demo.sh and install-deps.sh:
# - as root the script goes on, with its arguments, and never asks sudo;
# - a user who is not root, on a machine without sudo (a fresh Debian), gets one line that
#   says to run it as root, and exit 1 (not "sudo: command not found").
# The third case, a sudoer, needs sudo and a sudoers entry; it is checked by hand.
#
#   tests/scripts/as_root_test.sh
#
# Exit status: 0 passed; 1 failed; 77 skipped (not root: the second case needs runuser).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd -P)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (to run the no-sudo case as another user)"; exit 77; }
work=$(mktemp -d /tmp/stoker-as-root.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
failures=0
check() {  # check NAME EXPECTED_RC REGEX RC OUTPUT
  if [ "$4" = "$2" ] && grep -qE -- "$3" <<<"$5"; then echo "ok   $1"; else
    echo "FAIL $1: exit $4 (want $2), output:"; echo "$5"; failures=$((failures + 1)); fi
}

# A script shaped like test.sh: sources the helper, then reports who runs it and its arguments.
cp "$src/scripts/as-root.sh" "$work/as-root.sh"
cat >"$work/needs-root.sh" <<'SCRIPT'
#!/usr/bin/env bash
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
as_root needs-root "it starts daemons" "$@"
echo "running as uid $(id -u) with: $*"
SCRIPT
chmod 755 "$work/needs-root.sh" "$work/as-root.sh"

# A PATH without sudo, as on a fresh Debian: only the tools the helper and bash use.
mkdir "$work/bin"
for tool in bash id realpath grep paste env dirname; do ln -s "$(command -v $tool)" "$work/bin/$tool"; done

rc=0; out=$(env -i PATH="$work/bin" "$work/needs-root.sh" --keep "two words" 2>&1) || rc=$?
check "root runs it directly" 0 '^running as uid 0 with: --keep two words$' $rc "$out"

rc=0; out=$(runuser -u nobody -- env -i PATH="$work/bin" "$work/needs-root.sh" --keep 2>&1) || rc=$?
check "no sudo: one clear line" 1 "^needs-root: it starts daemons, and sudo is not installed here: run it as root \(su -c '.*needs-root.sh --keep'\)$" $rc "$out"
check "no sudo: that line only" 1 '^1$' $rc "$(wc -l <<<"$out")"

[ $failures = 0 ] || exit 1
echo "as-root: root and no-sudo cases passed"
