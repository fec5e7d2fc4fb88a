#!/usr/bin/env bash
# The rooms' include rules (docs/architecture.md), checked on the source tree:
#   - the rooms are ordered, lowest first:
#       common topology plan sources transforms distributed loader cuda doctor
#     a file of runtime/src/ROOM/ or runtime/include/stoker/ROOM/ includes headers of its own
#     room and of lower ones only (stoker/ROOM/... public, ROOM/... internal), never upwards;
#   - spank_plugin/ includes no loader, CUDA or Python header: the plugin runs inside
#     slurmstepd and must not pull the data path (threads, CUDA, libpython) into it;
#   - tools, the Python bindings and the plugin include public headers (stoker/...) and
#     their own folder's headers, never runtime/src's;
#   - no getenv but launch_env.cpp's (process_env): the environment is read one way;
#   - no source file under runtime/ or spank_plugin/ over 400 lines, in any language.
#   include_rules.sh [SOURCE_DIR]   (default: this checkout)
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
fails=0
bad() { echo "FAIL $1:"; sed 's/^/    /' <<<"$2"; fails=$((fails + 1)); }

rooms=(common topology plan sources transforms distributed loader cuda doctor)
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

[ $fails = 0 ] && echo "ok   include rules and file sizes hold" || exit 1
