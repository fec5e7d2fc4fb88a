#!/usr/bin/env bash
# Runs a command against the local test cluster started by the cluster.start fixture.
#
#   tests/cluster/with_cluster.sh CLUSTER_DIR COMMAND [ARGS...]
#
# Exits 77 (ctest: skipped) with the harness's reason when no cluster could be started
# here; otherwise cancels any job an earlier test left behind (local-cluster.sh clear)
# and runs COMMAND with SLURM_CONF set to the cluster's config and Open MPI restricted
# to TCP over the loopback (scripts/mpi-loopback.env).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
cluster=$1
shift
if [ -f "$cluster/skip-reason" ]; then
  echo "SKIP: no local cluster: $(cat "$cluster/skip-reason")"
  exit 77
fi
export PATH=/usr/sbin:/sbin:$PATH
export SLURM_CONF=$cluster/slurm.conf
"$(dirname "$0")/../../scripts/local-cluster.sh" clear "$cluster"
set -a
. "$(dirname "$0")/../../scripts/mpi-loopback.env"
set +a
exec "$@"
