#!/usr/bin/env bash
# Runs a command against the local test cluster started by the cluster.start fixture.
#
#   tests/cluster/with_cluster.sh CLUSTER_DIR COMMAND [ARGS...]
#
# Exits 77 (ctest: skipped) with the harness's reason when no cluster could be started
# here; otherwise runs COMMAND with SLURM_CONF set to the cluster's config and Open MPI
# restricted to TCP between the emulated nodes (shared/notes/local-slurm-cluster.md).
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
cluster=$1
shift
if [ -f "$cluster/skip-reason" ]; then
  echo "SKIP: no local cluster: $(cat "$cluster/skip-reason")"
  exit 77
fi
export PATH=/usr/sbin:/sbin:$PATH
export SLURM_CONF=$cluster/slurm.conf OMPI_MCA_pml=ob1 OMPI_MCA_btl=tcp,self
exec "$@"
