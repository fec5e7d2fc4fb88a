#!/usr/bin/env bash
# The plugin's source RPM for RHEL-family sites (packaging/rpm/stoker-slurm-plugin.spec):
# the source tarball of this checkout and `rpmbuild -bs`. The binary RPM is built on the
# site's own build host (a RHEL userland with its slurm-devel), which this Debian machine
# cannot provide: `rpmbuild --rebuild stoker-slurm-plugin-*.src.rpm` there.
#
#   scripts/rpm.sh --out DIR [--slurm-release MAJOR.MINOR]
#
# --slurm-release names the Slurm the package is for (its Release: 1.sl2411 for 24.11);
# without it the spec asks rpm for slurm-devel's version. Needs rpmbuild (Debian: rpm).
# Prints the source RPM's path.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd -P)
out="" release=()
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --slurm-release) [ $# -ge 2 ] || usage; release=(--define "slurm_release $2"); shift 2 ;;
    *) usage ;;
  esac
done
[ -n "$out" ] || usage
command -v rpmbuild >/dev/null || { echo "rpm: rpmbuild is not installed (Debian: rpm)" >&2; exit 1; }
version=$(sed -n 's/^project(stoker VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
top=$(realpath -m "$out")/rpmbuild
rm -rf "$top" && mkdir -p "$top"/{SOURCES,SPECS,SRPMS}
# The checkout's files as git knows them (committed or not, ignored ones left out).
git -C "$src" ls-files -z --cached --others --exclude-standard |
  (cd "$src" && tar --null -T - --transform "s,^,stoker-$version/," -czf \
    "$top/SOURCES/stoker-$version.tar.gz")
cp "$src/packaging/rpm/stoker-slurm-plugin.spec" "$top/SPECS/"
rpmbuild -bs --define "_topdir $top" --define "stoker_version $version" "${release[@]}" \
  "$top/SPECS/stoker-slurm-plugin.spec" >"$top/rpmbuild.log" 2>&1 ||
  { cat "$top/rpmbuild.log" >&2; exit 1; }
ls "$top"/SRPMS/stoker-slurm-plugin-*.src.rpm
