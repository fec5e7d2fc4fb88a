#!/usr/bin/env bash
# reach.rpm_source: scripts/rpm.sh makes the plugin's source RPM for a RHEL-family site
# (rpmbuild -bs, packaging/rpm/stoker-slurm-plugin.spec): its Release carries the Slurm
# release (1.sl2411), the binary package it describes requires that Slurm release only, it
# builds plugin-only from the checkout's sources, and without slurm-devel or a named release
# rpmbuild stops with a line saying what to do. The binary RPM needs a RHEL userland (its
# slurm-devel, its glibc), which this Debian machine cannot get: it is not built here.
#
#   tests/reach/rpm_source.sh WORK_DIR
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# = 1 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
work=$1
command -v rpmbuild >/dev/null || skip "rpmbuild is not installed (scripts/install-deps.sh: rpm)"
rm -rf "$work" && mkdir -p "$work"
srpm=$("$reach_src/scripts/rpm.sh" --out "$work/sl2411" --slurm-release 24.11)
check "source RPM written" 'stoker-slurm-plugin-[0-9.]+-1\.sl2411\.src\.rpm$' "$srpm"
check "its Release carries Slurm 24.11" '^1\.sl2411$' "$(rpm -qp --qf '%{RELEASE}' "$srpm")"
check "it builds against the site's slurm-devel" '^slurm-devel$' "$(rpm -qpR "$srpm")"
spec=$reach_src/packaging/rpm/stoker-slurm-plugin.spec
requires=$(rpmspec -q --requires --define 'slurm_release 24.11' --define 'stoker_version 0' "$spec")
check "the binary package requires Slurm 24.11 or later" '^slurm >= 24.11$' "$requires"
check "and older than 24.12" '^slurm < 24.12$' "$requires"
files=$(rpm -qpl "$srpm")
check "it holds the spec" '^stoker-slurm-plugin.spec$' "$files"
tarball=$(grep -E '^stoker-.*\.tar\.gz$' <<<"$files" || true)
check "and the sources" '^stoker-[0-9.]+\.tar\.gz$' "$tarball"
inside=$(tar -tzf "$work/sl2411/rpmbuild/SOURCES/$tarball")
check "the sources: the plugin and the core" 'spank_plugin/plugin\.cpp$' "$inside"
check "the sources: the plugin-only switch" '^stoker-[0-9.]+/CMakeLists\.txt$' "$inside"
check "the build is plugin-only" '-DSTOKER_PLUGIN_ONLY=ON' "$(cat "$spec")"

if command -v rpm >/dev/null && rpm -q slurm-devel >/dev/null 2>&1; then
  echo "ok   (slurm-devel is an installed RPM here: the no-release case is not tried)"
else
  out=$("$reach_src/scripts/rpm.sh" --out "$work/none" 2>&1) && rc=0 || rc=$?
  check "without slurm-devel it fails (exit $rc)" '^[1-9]' "$rc"
  check "and says what to do" "slurm-devel is not installed: install it, or pass --define 'slurm_release MAJOR.MINOR'" "$out"
fi
finish
