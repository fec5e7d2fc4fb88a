#!/usr/bin/env bash
# include_rules.sh's cycle rule, on a copy of the tree: the copy passes, and each of the
# inversions the rooms once had, planted back, fails the check naming both parts. A part
# holding types its room's files need while including them (image_transforms.hpp), a
# helper including the header of its user (mpi_wait.hpp and agreement.hpp), two parts each
# including the other (run_measures and run_record), and a longer cycle.
#   include_rules_test.sh [SOURCE_DIR]   (default: this checkout)
set -uo pipefail
src=${1:-$(cd "$(dirname "$0")/../.." && pwd -P)}
work=$(mktemp -d /tmp/stoker-include-rules.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
copy() {
  rm -rf "$work/tree" && mkdir -p "$work/tree/tests" &&
    cp -a "$src/runtime" "$src/spank_plugin" "$work/tree/" &&
    cp -a "$src/tests/unit" "$src/tests/scripts" "$work/tree/tests/"
}
check() {  # check NAME WANT_RC PATTERN...: runs the rules on the copy
  local name=$1 want=$2 out rc
  shift 2
  out=$(bash "$src/tests/scripts/include_rules.sh" "$work/tree" 2>&1)
  rc=$?
  local ok=yes
  [ $((rc != 0)) = "$want" ] || ok=no
  for pattern in "$@"; do grep -qE -- "$pattern" <<<"$out" || ok=no; done
  if [ $ok = yes ]; then echo "ok   $name"; else
    echo "FAIL $name (exit $rc), output:"; sed 's/^/    /' <<<"$out"; failures=$((failures + 1)); fi
}
plant() {  # plant FILE INCLUDE: adds the include to a header, after its #pragma once
  sed -i "/^#pragma once\$/a #include \"$2\"" "$work/tree/$1"
}

copy
check "the tree as it is has no cycle" 0 '^ok '

copy
plant runtime/src/distributed/mpi_wait.hpp stoker/distributed/agreement.hpp
check "mpi_wait.hpp including agreement.hpp back fails" 1 'distributed: parts that include each other' \
  '^ +distributed/mpi_wait$' '^ +distributed/agreement$'

copy
plant runtime/include/stoker/record/run_measures.hpp stoker/record/run_record.hpp
check "run_measures and run_record including each other fails" 1 \
  'record: parts that include each other' '^ +record/run_measures$' '^ +record/run_record$'

copy
plant runtime/include/stoker/transforms/crop.hpp stoker/transforms/image_transforms.hpp
check "crop.hpp including the image pipeline's header fails" 1 \
  'transforms: parts that include each other' '^ +transforms/crop$' '^ +transforms/image_transforms$'

copy
plant runtime/include/stoker/distributed/sampler_options.hpp stoker/distributed/agreement.hpp
check "a longer cycle (sampler_options, agreement, sampler) fails" 1 \
  '^ +distributed/sampler_options$' '^ +distributed/agreement$'

[ $failures = 0 ]
