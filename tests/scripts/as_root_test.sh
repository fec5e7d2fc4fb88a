#!/usr/bin/env bash
# scripts/as-root.sh, the front door of scripts/test.sh, demo.sh and install-deps.sh:
# - as root the script goes on, with its arguments, and never asks sudo;
# - a user who is not root, on a machine without sudo (a fresh Debian), gets one line that
#   says to run it as root, and exit 1 (not "sudo: command not found").
# - a sudoer runs it again through sudo, as root, with its arguments and STOKER_* settings.
#   That case needs sudo installed (Debian's `sudo`; scripts/install-deps.sh does not install
#   it): a throwaway user with a NOPASSWD entry in /etc/sudoers.d, both removed afterwards.
#   Without sudo it is skipped with the reason, and the other two cases still run.
#
#   tests/scripts/as_root_test.sh
#
# Exit status: 0 passed; 1 failed; 77 skipped (not root: the second case needs runuser).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd -P)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (to run the no-sudo case as another user)"; exit 77; }
work=$(mktemp -d /tmp/stoker-as-root.XXXXXX)
sudoer=stoker-as-root-test
sudoers=/etc/sudoers.d/stoker-as-root-test
cleanup() {
  rm -rf "$work"
  if [ -n "${made_sudoer:-}" ]; then rm -f "$sudoers"; userdel "$sudoer" 2>/dev/null || true; fi
}
trap cleanup EXIT
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
echo "running as uid $(id -u) with: $*${STOKER_KEEP:+ (STOKER_KEEP=$STOKER_KEEP)}"
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

cases="root and no-sudo"
if command -v sudo >/dev/null && command -v useradd >/dev/null && command -v visudo >/dev/null; then
  id "$sudoer" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$sudoer"
  made_sudoer=1
  echo "$sudoer ALL=(root) NOPASSWD: ALL" >"$sudoers.tmp"
  chmod 440 "$sudoers.tmp"
  visudo -cqf "$sudoers.tmp" && mv "$sudoers.tmp" "$sudoers"
  rc=0; out=$(runuser -u "$sudoer" -- env -i PATH=/usr/bin:/bin STOKER_KEEP=yes CI=true \
                "$work/needs-root.sh" --keep "two words" 2>&1) || rc=$?
  check "sudoer: through sudo, as root" 0 '^running as uid 0 with: --keep two words \(STOKER_KEEP=yes\)$' $rc "$out"
  check "sudoer: says so once" 0 '^needs-root: it starts daemons: running it with sudo$' $rc "$out"
  cases="root, no-sudo and sudoer"
else
  echo "skip sudoer: sudo is not installed (apt-get install sudo to check it)"
fi

[ $failures = 0 ] || exit 1
echo "as-root: $cases cases passed"
