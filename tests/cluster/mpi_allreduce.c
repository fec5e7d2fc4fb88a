/* A tiny MPI program for the cluster tests: every rank contributes rank+1 to an
   allreduce and prints the sum it got, which must be n(n+1)/2 on every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const char* workers = getenv("STOKER_WORKERS");
  printf("rank %d of %d sum %ld expected %ld stoker_workers %s\n", rank, size, sum,
         (long)size * (size + 1) / 2, workers ? workers : "-");
  MPI_Finalize();
  return sum == (long)size * (size + 1) / 2 ? 0 : 1;
}
