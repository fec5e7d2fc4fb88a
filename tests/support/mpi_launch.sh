#!/usr/bin/env bash
# Runs an MPI launch (mpirun ... or srun --mpi=pmix ...) and launches it once more when,
# and only when, Open MPI's TCP transport crashed while wiring the ranks up:
#
#   tests/support/mpi_launch.sh COMMAND [ARGS...]
#
# The crash it recognises, and why it happens, are in scripts/open-mpi-race.sh. A launch
# that failed any other way (a stoker error, a check that expects ranks to fail) is not
# repeated, and its status and output pass through unchanged.
set -uo pipefail
[ $# -ge 1 ] || { sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
. "$(dirname "$0")/../../scripts/open-mpi-race.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for attempt in 1 2; do
  { "$@" 2>&1 1>&3 | tee "$log" >&2; } 3>&1  # stderr to the log and on to stderr
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ] || [ "$attempt" -eq 2 ] || ! open_mpi_race_in "$log"; then
    exit "$rc"
  fi
  echo "mpi_launch: $open_mpi_race_note; launching once more" >&2
done
