#!/usr/bin/env bash
# reach.faults_glibc_floor: what cmake/toolchain-bullseye.cmake builds needs no glibc newer than the
# floor and no libstdc++ of the host: every ELF file given (or inside a given .deb) asks for
# GLIBC_ versions up to FLOOR only (objdump -p's version references), needs no libstdc++.so
# (no GLIBCXX_ or CXXABI_ version, no NEEDED entry), and exports no libstdc++ symbol (the
# static copy is hidden: another libstdc++ in srun or torch's process is not interposed on).
#
#   tests/reach/glibc_floor.sh FLOOR FILE_OR_DEB...
#
# Exit status: 0 passed; 1 a check failed; 77 skipped (no file given exists).
set -euo pipefail
. "$(dirname "$0")/reach_lib.sh"
[ $# -ge 2 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
floor=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

files=()
for f in "$@"; do
  case $f in
    *.deb)
      [ -f "$f" ] || continue
      d=$tmp/$(basename "$f")
      dpkg-deb -x "$f" "$d"
      while IFS= read -r e; do files+=("$e"); done < <(find "$d" -type f -exec sh -c \
        'head -c 4 "$1" | grep -q ELF' sh {} \; -print)
      ;;
    *) [ -f "$f" ] && files+=("$f") ;;
  esac
done
[ ${#files[@]} -gt 0 ] || skip "none of the files exists: $* (the reach.plugin_* tests build them)"

for f in "${files[@]}"; do
  name=${f#"$tmp/"}
  refs=$(objdump -p "$f" | sed -n '/^Version References:/,$p')
  newest=$(grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' <<<"$refs" | sed 's/GLIBC_//' | sort -V | tail -n 1)
  if [ -n "$newest" ] && [ "$(printf '%s\n%s\n' "$newest" "$floor" | sort -V | tail -n 1)" = "$floor" ]; then
    echo "ok   $name needs GLIBC_$newest at most (floor $floor)"
  else
    echo "FAIL $name needs GLIBC_$newest, above $floor:"
    grep -oE 'GLIBC_[0-9.]+' <<<"$refs" | sort -uV | tail -n 5
    failures=$((failures + 1))
  fi
  check_not "$name needs no libstdc++ (GLIBCXX/CXXABI, NEEDED)" \
    'GLIBCXX_|CXXABI_|NEEDED +libstdc\+\+' "$(objdump -p "$f")"
  check_not "$name exports no libstdc++ symbol" ' (_ZNSt|_ZNKSt|_ZSt|_ZTVSt|_ZTISt|__cxa_)' \
    "$(nm -D --defined-only "$f" 2>/dev/null)"
done
finish
