# Sourced by scripts/roots.sh and scripts/sysroot.sh: the Debian archive this machine reaches.
# shellcheck shell=bash

# The mirror of /etc/apt/sources.list.d/debian.sources (STOKER_DEBIAN_MIRROR overrides it).
debian_mirror() {
  [ -z "${STOKER_DEBIAN_MIRROR:-}" ] || { echo "$STOKER_DEBIAN_MIRROR"; return; }
  local m
  m=$(awk '$1 == "URIs:" && $2 !~ /security/ { print $2; exit }' \
    /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# "false" when the host's apt is told to accept a Release file past its Valid-Until (the
# archive here is a snapshot); an apt of another suite or root must be told the same.
apt_check_valid_until() {
  apt-config dump Acquire::Check-Valid-Until | grep -q '"false"' && echo false || echo true
}
