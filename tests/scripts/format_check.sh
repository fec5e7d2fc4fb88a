#!/usr/bin/env bash
# Every tracked C and C++ file as the project's .clang-format writes it (ctest scripts.format).
# Names each file that differs and prints the command that formats it.
#
#   tests/scripts/format_check.sh SOURCE_DIR
set -euo pipefail
cd "$1"
fmt=$(command -v clang-format || command -v clang-format-14 || true)
[ -n "$fmt" ] || { echo "SKIP: clang-format is not installed (scripts/install-deps.sh installs it)"; exit 77; }
# The fuzz corpus holds inputs, not code.
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' ':!tests/fuzz/corpus')
[ ${#files[@]} -gt 0 ] || { echo "SKIP: not a git checkout"; exit 77; }
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # deleted in the work tree, not yet in the index
  "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format:"
  printf '  %s\n' "${bad[@]}"
  echo "format: run: $fmt -i ${bad[*]}"
  exit 1
fi
echo "format: ${#files[@]} files match .clang-format"
