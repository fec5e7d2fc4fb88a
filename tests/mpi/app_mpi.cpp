// An application that links MPI and initialises it itself, then uses stoker (as the example
// trainer does): stoker, which loads MPI at run time, must use the application's library
// and its MPI_COMM_WORLD (this executable names it, so it holds the copy-relocated object
// libmpi uses) and agree over it. Prints "ok" on every rank; exit 0.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdio>

#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

int main() {
  int provided = 0, rank = 0, size = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const stoker::World w = stoker::detect_world();
  if (!w.mpi || w.rank != static_cast<uint64_t>(rank) ||
      w.world_size != static_cast<uint64_t>(size)) {
    std::fprintf(stderr, "rank %d of %d: stoker sees rank %llu of %llu (mpi %d)\n", rank, size,
                 static_cast<unsigned long long>(w.rank),
                 static_cast<unsigned long long>(w.world_size), w.mpi);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  stoker::SamplerOptions o;
  o.size = 100;
  o.rank = w.rank;
  o.world_size = w.world_size;
  o.seed = 7 + w.rank;  // rank 0's seed is taken
  const uint64_t seed = stoker::agree_on_epoch(o, 0);
  if (seed != 7) {
    std::fprintf(stderr, "rank %d: agreed seed %llu, not rank 0's 7\n", rank,
                 static_cast<unsigned long long>(seed));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  int sum = 0;  // the application's own MPI still works after stoker's use of it
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size - 1) / 2) MPI_Abort(MPI_COMM_WORLD, 4);
  std::printf("rank %d of %d: ok\n", rank, size);
  MPI_Finalize();
  return 0;
}
