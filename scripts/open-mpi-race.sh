# Sourced: recognises the one Open MPI failure that stoker's scripts launch once more.
#
# Open MPI 4.1.4 (Debian 12) has a race in its TCP transport: a rank still inside MPI_Init
# that receives a connection from a faster rank can call a null function pointer (SIGSEGV
# in mca_btl_tcp.so under ompi_mpi_init), and its peer prints "Open MPI failed to TCP
# connect to a peer MPI process". Between the local cluster's emulated nodes (one 2-core
# host, TCP over the loopback) it hits about one launch in 15 under load, before any
# stoker code runs. Used by tests/support/mpi_launch.sh (one launch), the template test
# and the demo (one batch job). docs/reliability.md has the row.

# open_mpi_race_in FILE...: true when any FILE shows that crash.
open_mpi_race_in() {
  grep -qsF 'Open MPI failed to TCP connect to a peer MPI process' "$@"
}

open_mpi_race_note='Open MPI TCP wire-up crashed (known Open MPI 4.1.4 race, before any stoker code ran)'
