#!/usr/bin/env bash
# The rooms' include rules (docs/architecture.md), checked on the source tree:
#   - the rooms are ordered, lowest first:
#       common topology plan record sources transforms distributed loader cuda doctor
#     a file of runtime/src/ROOM/ or runtime/include/stoker/ROOM/ includes headers of its own
#     room and of lower ones only (stoker/ROOM/... public, ROOM/... internal), never upwards;
#   - within a room, no include cycle: a name's header and source (public or internal) count
#     as one part, and a part never includes a part that includes it back, at any distance
#     (a header that holds types its room's files need splits them into their own header);
#   - spank_plugin/ includes no loader, CUDA or Python header: the plugin runs inside
#     slurmstepd and must not pull the data path (threads, CUDA, libpython) into it;
#   - tools, the Python bindings and the plugin include public headers (stoker/...) and
#     their own folder's headers, never runtime/src's;
#   - no getenv but launch_env.cpp's (process_env): the environment is read one way;
#   - no source file under runtime/ or spank_plugin/ over 400 lines, in any language;
#   - a public header stoker/ROOM/NAME.hpp pairs with src/ROOM/NAME.cpp, or its opening comment
#     lists the files that implement it ("Implemented in src/ROOM/: a.cpp, b.cpp.", each
#     one there) or says it has none ("Header only");
#   - a unit test file tests/unit/AREA/NAME_test.cpp is named after a source of the folder it
#     mirrors (SOURCE_test.cpp, or SOURCE_ASPECT_test.cpp when a source has several), and no
#     two test files in tests/ share a name: a reader goes from a file to its tests by name.
#   include_rules.sh [SOURCE_DIR]   (default: this checkout)
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
fails=0
bad() { echo "FAIL $1:"; sed 's/^/    /' <<<"$2"; fails=$((fails + 1)); }

rooms=(common topology plan record sources transforms distributed loader cuda doctor)
# Every folder of runtime/src and include/stoker is a room with a place in the order.
for dir in runtime/src/*/ runtime/include/stoker/*/; do
  name=$(basename "$dir")
  [[ " ${rooms[*]} " == *" $name "* ]] || bad "a folder that is no room" "$dir (add it to rooms= in $0)"
done
hits=$(find runtime/include/stoker -maxdepth 1 -type f)
[ -z "$hits" ] || bad "public headers outside a room's folder" "$hits"
for i in "${!rooms[@]}"; do
  higher=$(IFS='|'; echo "${rooms[*]:i+1}")
  [ -n "$higher" ] || continue
  room=${rooms[$i]}
  hits=$(grep -rnE "#include \"(stoker/)?($higher)/" "runtime/src/$room" "runtime/include/stoker/$room" 2>/dev/null)
  [ -z "$hits" ] || bad "$room includes a higher room ($higher)" "$hits"
done

# The parts of a room: ROOM/NAME for stoker/ROOM/NAME.hpp, src/ROOM/NAME.hpp and .cpp. Each
# include of a part of the same room ("stoker/ROOM/x.hpp", "ROOM/x.hpp", or "x.hpp" beside
# it) is an edge; tsort names the parts of each cycle it finds.
for room in "${rooms[@]}"; do
  edges=$(grep -rHoE '^#include "[^"]+"' "runtime/src/$room" "runtime/include/stoker/$room" 2>/dev/null |
    sed -E "s#^runtime/(src|include/stoker)/$room/([^.:]+)\.[ch]pp:\#include \"(stoker/)?#\2 #; s#\"\$##" |
    awk -v room="$room" '{ to = $2; sub(/\.[ch]pp$/, "", to)
      if (to !~ /\//) to = room "/" to
      if (index(to, room "/") == 1) { to = substr(to, length(room) + 2); if (to != $1) print $1, to } }')
  [ -n "$edges" ] || continue
  loops=$(tsort <<<"$edges" 2>&1 >/dev/null |
    sed -E "s#^tsort: .*input contains a loop:#a cycle:#; s#^tsort: #  $room/#")
  [ -z "$loops" ] || bad "$room: parts that include each other (split what the lower one needs into a header of its own)" "$loops"
done

hits=$(grep -rnE '#include [<"](stoker/(loader|cuda|sources|transforms|distributed|doctor)/|loader/|cuda/|cuda_|Python\.h|pybind11)' spank_plugin/)
[ -z "$hits" ] || bad "spank_plugin/ includes data-path, CUDA or Python headers" "$hits"

# Headers of runtime/src are named by their folder ("plan/planner.hpp", "sources/...").
src_dirs=$(IFS='|'; echo "${rooms[*]}")
hits=$(grep -rnE "#include \"($src_dirs)/" runtime/tools runtime/python/src runtime/examples spank_plugin/)
[ -z "$hits" ] || bad "tools, bindings, examples or the plugin include runtime/src headers" "$hits"

# The environment is read through launch_env (process_env(), an EnvGetter), the one getenv.
hits=$(grep -rnw --include='*.[ch]pp' -e getenv -e secure_getenv runtime/src runtime/tools \
  runtime/examples runtime/python/src spank_plugin | grep -v '^runtime/src/common/launch_env\.cpp:')
[ -z "$hits" ] || bad "getenv outside launch_env (read through process_env() or an EnvGetter)" "$hits"

hits=$(find runtime spank_plugin -type f \( -name '*.[ch]pp' -o -name '*.[ch]' -o -name '*.cu' \
  -o -name '*.cuh' -o -name '*.py' -o -name '*.sh' \) -exec wc -l {} + | grep -v ' total$' |
  awk '$1 > 400')
[ -z "$hits" ] || bad "files over 400 lines (split them)" "$hits"

hits=""
for header in runtime/include/stoker/*/*.hpp; do
  room=$(basename "$(dirname "$header")")
  [ -f "runtime/src/$room/$(basename "$header" .hpp).cpp" ] && continue
  opening=$(awk '!/^\/\//{exit} {print}' "$header")
  grep -q "Header only" <<<"$opening" && continue
  listed=$(sed -n '/Implemented in/,$p' <<<"$opening" | grep -oE '[A-Za-z0-9_]+\.cpp')
  [ -n "$listed" ] || { hits+="$header: no source by its name, and no list"$'\n'; continue; }
  for source in $listed; do
    [ -f "runtime/src/$room/$source" ] || hits+="$header: lists $source, not in runtime/src/$room"$'\n'
  done
done
[ -z "$hits" ] || bad "public headers that pair with no source" "${hits%$'\n'}"

# The folder a unit-test area mirrors: a room (its src and public headers), tools, the plugin.
mirrored() {
  case $1 in
    tools) echo runtime/tools ;;
    spank) echo spank_plugin ;;
    *) echo "runtime/src/$1 runtime/include/stoker/$1" ;;
  esac
}
hits=""
for test in tests/unit/*/*_test.cpp; do
  name=$(basename "$test" _test.cpp)
  named=no
  for source in $(find $(mirrored "$(basename "$(dirname "$test")")") -maxdepth 1 -name '*.[ch]pp'); do
    stem=$(basename "${source%.*}")
    [[ $name == "$stem" || $name == "${stem}_"* ]] && named=yes && break
  done
  [ $named = yes ] || hits+="$test"$'\n'
done
[ -z "$hits" ] || bad "unit tests not named after a source of the folder they mirror" "${hits%$'\n'}"
hits=$(find tests \( -name '*_test.cpp' -o -name 'test_*.py' -o -name '*_test.sh' \) -printf '%f\n' |
  sort | uniq -d)
[ -z "$hits" ] || bad "test files sharing a name" "$hits"

[ $fails = 0 ] && echo "ok   include rules, file sizes, header and test names hold" || exit 1
