// An MPI program across both emulated nodes under srun --mpi=pmix with the plugin on.
#include <string>

#include "cluster_harness.hpp"

namespace stoker::test {
namespace {

class Mpi : public ClusterTest {};

TEST_F(Mpi, AllreduceAcrossTwoNodesWithThePlugin) {
#ifndef STOKER_MPI_PROGRAM
  GTEST_SKIP() << "built without MPI";
#else
  const RunResult r = run(STOKER_SOURCE_DIR
                          "/tests/support/mpi_launch.sh srun --mpi=pmix -N2 -n4 --stoker "
                          "--stoker-workers=1 " STOKER_MPI_PROGRAM);
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(
        r.out.find("rank " + std::to_string(rank) + " of 4 sum 10 expected 10 stoker_workers 1\n"),
        std::string::npos)
        << r.out << r.err;
  }
#endif
}

}  // namespace
}  // namespace stoker::test
