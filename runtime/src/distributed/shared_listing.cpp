#include "stoker/distributed/shared_listing.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "mpi_comm.hpp"
#include "mpi_wait.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker {

namespace {

constexpr std::string_view kOk = "ok\n", kFailed = "error\n";

#ifdef STOKER_HAVE_MPI
// Broadcasts rank 0's `message` (its size, then its bytes in pieces MPI's int count holds)
// on stoker's communicator; every rank returns it. Waits like a collective.
std::string broadcast_from_rank0(const distributed::MpiApi& mpi, MPI_Comm comm, uint64_t rank,
                                 std::string message, const std::string& root) {
  const AgreeWait wait = agree_wait_from_environment();
  const auto bcast = [&](void* data, int count, MPI_Datatype type) {
    MPI_Request request;
    mpi.Ibcast(data, count, type, 0, comm, &request);
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
#endif

}  // namespace

std::string shared_listing_error(const std::string& what) {
  return std::string(kFailed) + what;
}

std::shared_ptr<const ImageFolderSource> list_and_share(
    const std::string& root, const std::function<void(const std::string&)>& send) {
  std::shared_ptr<const ImageFolderSource> source;
  try {
    source = std::make_shared<ImageFolderSource>(root);
  } catch (const Error& e) {
    send(shared_listing_error(e.what()));
    throw;
  }
  send(std::string(kOk) + source->index());
  return source;
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
  if (agree && world_size > 1 && detect_world().mpi) {
    const distributed::MpiApi* mpi = distributed::coordination_api();
    MPI_Comm comm = distributed::coordination_comm();
    if (mpi && comm && comm != mpi->comm_null) {
      const uint64_t me = detect_world().rank;
      if (me == 0) {
        return list_and_share(root, [&](const std::string& message) {
          broadcast_from_rank0(*mpi, comm, me, message, root);
        });
      }
      return take_shared_listing(root, broadcast_from_rank0(*mpi, comm, me, {}, root), me);
    }
  }
#endif
  (void)world_size;
  (void)agree;
  return std::make_shared<ImageFolderSource>(root);
}

}  // namespace stoker
