// agree_on_epoch() under MPI: one all-gather of every rank's EpochView, then the same check
// on every rank (epoch_views.cpp), so every rank reaches the same verdict and message.
// It waits like a collective: a late rank (rank 0 writing a checkpoint) is waited for, with
// a note naming it every STOKER_AGREE_WARN seconds, up to STOKER_AGREE_TIMEOUT.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "mpi_comm.hpp"
#include "mpi_wait.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker {

#ifdef STOKER_HAVE_MPI
namespace {
constexpr int kArrivedTag = 5700;  // arrival notes on stoker's own communicator

// Who has reached the agreement, as far as this rank can tell, at O(world) messages per
// epoch: every rank tells rank 0, and rank 0 tells rank 1. So rank 0 can name every late
// rank, and rank 1 can name rank 0 when rank 0 itself is late; the others name no one.
class Arrivals {
 public:
  Arrivals(const distributed::MpiApi& mpi, MPI_Comm comm, int rank, int size) : mpi_(mpi) {
    if (rank == 0) {
      for (int r = 1; r < size; ++r) receive(comm, r);
      if (size > 1) send(comm, 1);
    } else {
      send(comm, 0);
      if (rank == 1) receive(comm, 0);
    }
  }
  Arrivals(const Arrivals&) = delete;
  Arrivals& operator=(const Arrivals&) = delete;
  ~Arrivals() {  // every rank arrived (the all-gather completed): the notes complete too
    mpi_.Waitall(static_cast<int>(receives_.size()), receives_.data(), MPI_STATUSES_IGNORE);
    mpi_.Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
  }

  // The ranks this rank has not heard from yet ("" when it cannot tell or heard from all).
  std::string missing() {
    std::vector<uint64_t> late;
    for (size_t i = 0; i < receives_.size(); ++i) {
      int done = 0;
      mpi_.Test(&receives_[i], &done, MPI_STATUS_IGNORE);
      if (!done) late.push_back(static_cast<uint64_t>(from_[i]));
    }
    return late.empty() ? "" : rank_list(late);
  }

 private:
  void receive(MPI_Comm comm, int from) {
    from_.push_back(from);
    receives_.emplace_back();
    mpi_.Irecv(&inbox_, 0, mpi_.byte, from, kArrivedTag, comm, &receives_.back());
  }
  void send(MPI_Comm comm, int to) {
    sends_.emplace_back();
    mpi_.Isend(&inbox_, 0, mpi_.byte, to, kArrivedTag, comm, &sends_.back());
  }

  const distributed::MpiApi& mpi_;
  char inbox_ = 0;         // the notes carry no data
  std::vector<int> from_;  // the rank each of receives_ hears from
  std::vector<MPI_Request> receives_, sends_;
};

// All-gathers the views, waiting like a collective (mpi_wait.hpp): a late rank is waited
// for with a note naming it every wait.warn, and one that never arrives aborts the job.
std::vector<EpochView> gather(const distributed::MpiApi& mpi, MPI_Comm comm, const EpochView& mine,
                              int size) {
  const AgreeWait wait = agree_wait_from_environment();
  const int rank = static_cast<int>(mine.comm_rank);
  Arrivals arrivals(mpi, comm, rank, size);
  std::vector<EpochView> all(static_cast<size_t>(size));
  MPI_Request request;
  mpi.Iallgather(&mine, kEpochViewWords, mpi.uint64, all.data(), kEpochViewWords, mpi.uint64, comm,
                 &request);
  distributed::wait_like_a_collective(
      mpi, comm, request, wait,
      [&](std::chrono::seconds waited) {
        const std::string missing = arrivals.missing();
        if (!missing.empty()) {
          std::fprintf(
              stderr, "%s\n",
              agree_waiting_line(mine.comm_rank, mine.epoch, missing, waited, wait).c_str());
        }
      },
      [&] {
        return "rank " + std::to_string(rank) +
               ": agree_on_epoch: " + agree_timeout_text(mine.epoch, arrivals.missing(), wait);
      });
  return all;
}
}  // namespace
#endif

uint64_t agree_on_epoch(const SamplerOptions& opts, uint64_t epoch) {
  if (opts.world_size <= 1) return opts.seed;  // a loader of one rank enters no collective
#ifdef STOKER_HAVE_MPI
  const World world = detect_world();
  const distributed::MpiApi* mpi = distributed::coordination_api();
  MPI_Comm comm = distributed::coordination_comm();
  if (world.mpi && mpi && comm && comm != mpi->comm_null) {
    const auto views =
        gather(*mpi, comm, epoch_view(opts, epoch, world.rank), static_cast<int>(world.world_size));
    check_epoch_views(views, SeedRule::take_rank0);
    return views[0].seed;
  }
#endif
  note_unchecked_ranks(opts.rank, opts.world_size);
  (void)epoch;
  return opts.seed;
}

std::string agreement_mode(uint64_t rank, uint64_t world_size, bool agree) {
  if (!agree) return "off";
  if (world_size <= 1) return "single rank";
  if (detect_world().mpi) return "MPI";
  return note_unchecked_ranks(rank, world_size);
}

}  // namespace stoker
