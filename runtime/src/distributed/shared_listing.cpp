#include "stoker/distributed/shared_listing.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "mpi_comm.hpp"
#include "mpi_wait.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/node_name.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker {

namespace {

constexpr std::string_view kOk = "ok\n", kFailed = "error\n";

#ifdef STOKER_HAVE_MPI
// Broadcasts `from`'s `message` (its size, then its bytes in pieces MPI's int count holds) on
// stoker's communicator; every rank returns it. Waits like a collective.
std::string broadcast(const distributed::MpiApi& mpi, MPI_Comm comm, uint64_t rank, int from,
                      std::string message, const std::string& root) {
  const AgreeWait wait = agree_wait_from_environment();
  const auto bcast = [&](void* data, int count, MPI_Datatype type) {
    MPI_Request request;
    mpi.Ibcast(data, count, type, from, comm, &request);
    distributed::wait_like_a_collective(
        mpi, comm, request, wait,
        [&](std::chrono::seconds waited) {
          if (rank == 1) {
            std::fprintf(stderr, "%s\n", listing_waiting_line(rank, root, waited, wait).c_str());
          }
        },
        [&] { return "rank " + std::to_string(rank) + ": " + listing_timeout_text(root, wait); });
  };
  uint64_t size = message.size();
  bcast(&size, 1, mpi.uint64);
  message.resize(size);
  constexpr uint64_t kPiece = uint64_t{1} << 30;
  for (uint64_t at = 0; at < size; at += kPiece) {
    bcast(message.data() + at, static_cast<int>(std::min(kPiece, size - at)), mpi.byte);
  }
  return message;
}

// Every rank's `problem` ("" for none) made known to all: the first rank that has one
// broadcasts it. One all-gather of a word per rank, and one broadcast when a rank has one.
std::string first_problem(const distributed::MpiApi& mpi, MPI_Comm comm, const World& w,
                          const std::string& problem, const std::string& root) {
  const uint64_t mine = problem.empty() ? 0 : 1;
  std::vector<uint64_t> all(w.world_size);
  MPI_Request request;
  mpi.Iallgather(&mine, 1, mpi.uint64, all.data(), 1, mpi.uint64, comm, &request);
  const AgreeWait wait = agree_wait_from_environment();
  distributed::wait_like_a_collective(
      mpi, comm, request, wait, [](std::chrono::seconds) {},
      [&] { return "rank " + std::to_string(w.rank) + ": " + listing_timeout_text(root, wait); });
  const auto first = std::find(all.begin(), all.end(), uint64_t{1});
  if (first == all.end()) return "";
  return broadcast(mpi, comm, w.rank, static_cast<int>(first - all.begin()), problem, root);
}

// open_image_folder's MPI side: rank 0 lists and broadcasts, the others take; then every
// rank but rank 0's node checks its own copy (node_copy_problem) and all learn the first
// problem: each rank throws it, none waits for one that gave up.
std::shared_ptr<const ImageFolderSource> share_over_mpi(const distributed::MpiApi& mpi,
                                                        MPI_Comm comm, const World& w,
                                                        const std::string& root) {
  if (w.rank == 0) {
    auto source = list_and_share(
        root, [&](const std::string& message) { broadcast(mpi, comm, w.rank, 0, message, root); });
    if (const std::string problem = first_problem(mpi, comm, w, "", root); !problem.empty()) {
      throw node_copy_error(root, problem);
    }
    return source;
  }
  const std::string message = broadcast(mpi, comm, w.rank, 0, {}, root);
  if (message.starts_with(kFailed)) return take_shared_listing(root, message, w.rank);
  std::shared_ptr<const ImageFolderSource> source;
  std::string problem;
  try {
    source = take_shared_listing(root, message, w.rank);
    if (checks_node_copy(w.rank, w.local_rank)) problem = node_copy_problem(*source);
  } catch (const Error& e) {  // the folder is missing on this node, say: the others must know
    problem = node_name(process_env()) + ": " + e.what();
  } catch (const std::exception& e) {
    problem = node_name(process_env()) + ": " + root + ": " + e.what();
  }
  problem = first_problem(mpi, comm, w, problem, root);
  if (!problem.empty()) throw node_copy_error(root, problem);
  return source;
}
#endif

}  // namespace

std::string shared_listing_error(const std::string& what) {
  return std::string(kFailed) + what;
}

std::shared_ptr<const ImageFolderSource> list_and_share(
    const std::string& root, const std::function<void(const std::string&)>& send) {
  std::shared_ptr<const ImageFolderSource> source;
  std::string index;
  try {
    source = std::make_shared<ImageFolderSource>(root);
    index = source->index();
  } catch (const Error& e) {
    send(shared_listing_error(e.what()));
    throw;
  } catch (const std::exception& e) {  // out of memory, say: the others must not wait for it
    send(shared_listing_error(root + ": " + e.what()));
    throw;
  } catch (...) {
    send(shared_listing_error(root + ": an unknown exception"));
    throw;
  }
  send(std::string(kOk) + index);
  return source;
}

bool checks_node_copy(uint64_t rank, uint64_t local_rank) {
  return rank != 0 && local_rank == 0;
}

std::string node_copy_problem(const ImageFolderSource& taken) {
  const std::string differs = taken.sample_differs();
  if (differs.empty()) return "";
  return "the copy on " + node_name(process_env()) + " is not rank 0's: " + differs;
}

Error node_copy_error(const std::string& root, const std::string& problem) {
  return Error(root, problem,
               "every node must hold the same dataset: stage the same copy on every node, or "
               "read one shared copy");
}

std::shared_ptr<const ImageFolderSource> take_shared_listing(const std::string& root,
                                                             std::string_view message,
                                                             uint64_t rank) {
  if (message.starts_with(kFailed)) {
    throw Error(root, "rank 0 could not list it: " + std::string(message.substr(kFailed.size())),
                "see rank 0's error; every rank reads the folder rank 0 lists");
  }
  if (message.starts_with(kOk)) {
    if (auto s = ImageFolderSource::from_index(root, message.substr(kOk.size()))) return s;
  }
  std::fprintf(stderr,
               "stoker: rank %llu: cannot take rank 0's listing of the image folder (it lists "
               "another root than %s, or comes from another stoker version): listing it here\n",
               static_cast<unsigned long long>(rank), root.c_str());
  return std::make_shared<ImageFolderSource>(root);
}

std::shared_ptr<const ImageFolderSource> open_image_folder(const std::string& root,
                                                           uint64_t world_size, bool agree) {
#ifdef STOKER_HAVE_MPI
  // Over MPI only when the loader's ranks are MPI's: a loader of another size (a subgroup, an
  // evaluation loader of some ranks) would wait in a broadcast that the others never enter.
  const World w = agree && world_size > 1 ? detect_world() : World{};
  if (w.mpi && w.world_size == world_size) {
    const distributed::MpiApi* mpi = distributed::coordination_api();
    MPI_Comm comm = distributed::coordination_comm();
    if (mpi && comm && comm != mpi->comm_null) return share_over_mpi(*mpi, comm, w, root);
  }
#endif
  (void)world_size;
  (void)agree;
  return std::make_shared<ImageFolderSource>(root);
}

}  // namespace stoker
