// MPI loaded at run time (runtime/src/distributed/mpi_api.hpp): what happens when the
// library is absent, is not Open MPI, or cannot start; and that a rank launched under MPI
// never dies of it (srun --mpi=pmix in a container without Open MPI).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "distributed/mpi_api.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

#ifdef STOKER_HAVE_MPI
namespace {
namespace d = stoker::distributed;
namespace fs = std::filesystem;

bool open_mpi_here() {
  void* h = dlopen(d::kMpiLibrary, RTLD_NOW | RTLD_NOLOAD);
  if (h) {
    dlclose(h);
    return true;
  }
  return fs::exists("/usr/lib/x86_64-linux-gnu/libmpi.so.40");
}

TEST(MpiApi, AnAbsentLibraryIsNamedWithTheLoadersReason) {
  std::string why;
  const auto env = stoker::env_from({{"STOKER_MPI_LIBRARY", "libstoker-no-such-mpi.so.40"}});
  EXPECT_EQ(d::mpi_api(env, false, &why), nullptr);
  EXPECT_EQ(why, "");  // not loaded, and asked not to load: nothing to say
  EXPECT_EQ(d::mpi_api(env, true, &why), nullptr);
  EXPECT_NE(why.find("libstoker-no-such-mpi.so.40: cannot open shared object file"),
            std::string::npos)
      << why;
}

TEST(MpiApi, ALibraryWithoutOpenMpisSymbolsIsRefused) {
  std::string why;
  const auto env = stoker::env_from({{"STOKER_MPI_LIBRARY", "libz.so.1"}});
  EXPECT_EQ(d::mpi_api(env, true, &why), nullptr);
  EXPECT_EQ(why, "libz.so.1 has no MPI_Init_thread (not Open MPI's ABI)");
}

TEST(MpiApi, InstallDirsExpandAsOpenMpiDoes) {
  const auto dirs = [](const std::string& name) -> std::string {
    if (name == "prefix") return "/opt/hpcx/ompi";
    if (name == "exec_prefix") return "${prefix}";
    if (name == "libdir") return "${exec_prefix}/lib";
    return "";
  };
  EXPECT_EQ(d::expand_install_dir("${libdir}/openmpi", dirs), "/opt/hpcx/ompi/lib/openmpi");
  EXPECT_EQ(d::expand_install_dir("/usr/lib", dirs), "/usr/lib");
  EXPECT_EQ(d::expand_install_dir("${unknown}/x", dirs), "/x");
}

TEST(MpiApi, ComponentsFolderCheck) {
  const fs::path dir = fs::temp_directory_path() / ("stoker-mca-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string v4 = "Open MPI v4.1.4, package: Debian OpenMPI";
  EXPECT_NE(d::open_mpi_components_missing(v4, dir.string()).find("is missing"), std::string::npos);
  fs::create_directories(dir);
  EXPECT_EQ(d::open_mpi_components_missing(v4, dir.string()),
            "Open MPI's components folder " + dir.string() +
                " has no mca_ess_pmi.so: Open MPI is not completely installed here");
  std::ofstream(dir / "mca_ess_pmi.so") << "";
  EXPECT_NE(d::open_mpi_components_missing(v4, dir.string()).find("has no mca_pmix_*.so"),
            std::string::npos);
  std::ofstream(dir / "mca_pmix_ext3x.so") << "";
  EXPECT_EQ(d::open_mpi_components_missing(v4, dir.string()), "");
  // Open MPI 5 (components built in by default) and other libraries are not checked.
  EXPECT_EQ(d::open_mpi_components_missing("Open MPI v5.0.3", "/nonexistent"), "");
  fs::remove_all(dir);
}

TEST(MpiApi, DebiansOpenMpiLoadsAndCanStart) {
  if (!open_mpi_here()) GTEST_SKIP() << "no libmpi.so.40 on this machine";
  std::string why;
  const auto env = stoker::env_from({});
  const d::MpiApi* api = d::mpi_api(env, true, &why);
  ASSERT_NE(api, nullptr) << why;
  EXPECT_NE(api->comm_world, nullptr);
  EXPECT_NE(api->comm_world, api->comm_null);
  EXPECT_EQ(d::mpi_start_problem(*api, env), "");  // the installation is complete
  // Moved (OPAL_PREFIX) to where it is not: the components are looked for there.
  const std::string moved =
      d::mpi_start_problem(*api, stoker::env_from({{"OPAL_PREFIX", "/nonexistent-ompi"}}));
  EXPECT_EQ(moved.rfind("Open MPI's components folder /nonexistent-ompi/", 0), 0u) << moved;
  EXPECT_NE(moved.find("is missing"), std::string::npos) << moved;
}

// The rank goes on, with one line naming why, where Open MPI would have ended it with exit 1
// ("An error occurred in MPI_Init_thread ... MPI_ERRORS_ARE_FATAL").
void launched_rank(const char* library, const char* opal_prefix) {
  ::setenv("PMIX_RANK", "0", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  if (library) ::setenv("STOKER_MPI_LIBRARY", library, 1);
  if (opal_prefix) ::setenv("OPAL_PREFIX", opal_prefix, 1);
  const stoker::World w = stoker::detect_world();
  if (w.mpi || w.rank != 1 || w.world_size != 2) std::exit(3);
  if (stoker::agreement_mode(w.rank, w.world_size, true)
          .rfind("not checked: MPI is not usable", 0) != 0) {
    std::exit(4);
  }
  std::exit(0);
}

TEST(MpiApiDeathTest, ALaunchedRankWithoutLibmpiGoesOn) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launched_rank("libstoker-no-such-mpi.so.40", nullptr), testing::ExitedWithCode(0),
              "^stoker: rank 1: MPI is not usable here \\(libstoker-no-such-mpi.so.40: cannot "
              "open shared object file.*\\): ranks are not checked at epoch starts "
              "\\(torch.distributed is used when initialised\\)\n$");
}

TEST(MpiApiDeathTest, ALaunchedRankWhoseOpenMpiCannotStartGoesOn) {
  if (!open_mpi_here()) GTEST_SKIP() << "no libmpi.so.40 on this machine";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launched_rank(nullptr, "/nonexistent-ompi"), testing::ExitedWithCode(0),
              "^stoker: rank 1: MPI is not usable here \\(Open MPI's components folder "
              "/nonexistent-ompi/.* is missing .*\\): ranks are not checked");
}
}  // namespace
#endif
