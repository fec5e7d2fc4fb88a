// Ranks under mpirun for the shared listing's and the MPI choice's faults
// (tests/mpi/CMakeLists.txt):
//   listing_ranks loader-size   rank 0 alone opens an image folder (2,000 files) for a loader of
//                               more ranks than MPI's: it must list it itself, not wait in a
//                               broadcast that no other rank enters (STOKER_AGREE_TIMEOUT then
//                               aborted the job)
//   listing_ranks world mpi|none   the world as detect_world() finds it, and whether libmpi is
//                               mapped: "mpi" under mpirun, "none" when another launcher
//                               (torchrun's variables) owns the process
// Prints "rank R ok" and exits 0 when every check holds, else names what failed, exit 1.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "stoker/distributed/shared_listing.hpp"
#include "stoker/distributed/world.hpp"

namespace {

bool libmpi_mapped() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find("/libmpi.so") != std::string::npos) return true;
  }
  return false;
}

int fail(uint64_t rank, const std::string& what) {
  std::fprintf(stderr, "rank %llu: %s\n", static_cast<unsigned long long>(rank), what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const stoker::World w = stoker::detect_world();
  if (mode == "world" && argc > 2) {
    const bool want_mpi = std::string(argv[2]) == "mpi";
    if (w.mpi != want_mpi)
      return fail(w.rank, std::string("MPI in use: ") + (w.mpi ? "yes" : "no"));
    if (libmpi_mapped() != want_mpi) {
      return fail(w.rank, std::string("libmpi mapped: ") + (want_mpi ? "no" : "yes"));
    }
  } else if (mode == "loader-size") {
    if (!w.mpi) return fail(w.rank, "not launched under MPI");
    if (w.rank == 0) {
      const std::string root = std::filesystem::temp_directory_path().string() +
                               "/stoker-listing-ranks." + std::to_string(::getpid());
      // Enough names that the index passes Open MPI's eager limit (64 KiB over TCP): a send
      // that needs its receiver, as a real dataset's does.
      std::filesystem::create_directories(root + "/cat");
      for (int i = 0; i < 2000; ++i) {
        std::ofstream(root + "/cat/" + std::to_string(i) + std::string(40, 'x') + ".jpg") << "x";
      }
      const auto source = stoker::open_image_folder(root, w.world_size + 1, /*agree=*/true);
      std::filesystem::remove_all(root);
      if (source->size() != 2000) return fail(w.rank, "the folder's images were not listed");
    }
  } else {
    std::fprintf(stderr, "usage: listing_ranks loader-size | world mpi|none\n");
    return 2;
  }
  std::printf("rank %llu ok\n", static_cast<unsigned long long>(w.rank));
  return 0;
}
