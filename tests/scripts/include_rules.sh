#!/usr/bin/env bash
# The rooms' include rules (docs/architecture.md), checked on the source tree:
#   - spank_plugin/ includes no loader, CUDA or Python header: the plugin runs inside
#     slurmstepd and must not pull the data path (threads, CUDA, libpython) into it;
#   - runtime/src/sources/ includes nothing of the loader but the source interfaces it
#     implements (stoker/loader/*source.hpp, shard_stream.hpp, mapped_read.hpp): sources
#     read bytes, the loader schedules them, never the other way round;
#   - tools, the Python bindings and the plugin include public headers (stoker/...) and
#     their own folder's headers, never runtime/src's.
#   - no file in runtime/src or spank_plugin/ over 400 lines.
#   include_rules.sh [SOURCE_DIR]   (default: this checkout)
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
fails=0
bad() { echo "FAIL $1:"; sed 's/^/    /' <<<"$2"; fails=$((fails + 1)); }

hits=$(grep -rnE '#include [<"](stoker/(loader|cuda)/|loader/|cuda/|cuda_|Python\.h|pybind11)' spank_plugin/)
[ -z "$hits" ] || bad "spank_plugin/ includes loader, CUDA or Python headers" "$hits"

hits=$(grep -rnE '#include "(loader/|stoker/loader/)' runtime/src/sources/ |
  grep -vE 'stoker/loader/([a-z_]*source|shard_stream|mapped_read)\.hpp"')
[ -z "$hits" ] || bad "runtime/src/sources/ includes loader headers" "$hits"

# Headers of runtime/src are named by their folder ("plan/planner.hpp", "sources/...").
src_dirs=$(cd runtime/src && ls -d */ | tr -d / | paste -sd'|')
hits=$(grep -rnE "#include \"($src_dirs)/" runtime/tools runtime/python/src spank_plugin/)
[ -z "$hits" ] || bad "tools, bindings or the plugin include runtime/src headers" "$hits"

hits=$(find runtime/src spank_plugin -name '*.[ch]pp' -exec wc -l {} + | grep -v ' total$' |
  awk '$1 > 400')
[ -z "$hits" ] || bad "files over 400 lines (split them)" "$hits"

[ $fails = 0 ] && echo "ok   include rules and file sizes hold" || exit 1
