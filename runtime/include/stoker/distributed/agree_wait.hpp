// How long a rank waits for the others at a collective of stoker's (the epoch agreement,
// the shared listing), and the lines it prints while it waits: the texts both transports
// print (MPI, and torch.distributed from the Python module). Apart from agreement.hpp
// because the MPI wait (distributed/mpi_wait.hpp) needs it and agreement.cpp needs that wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace stoker {

// How a rank waits for the others at the agreement, like a collective: it prints a line
// naming the missing ranks every `warn` and gives up after `timeout` (0: never).
struct AgreeWait {
  std::chrono::seconds warn{60};
  std::chrono::seconds timeout{1800};  // NCCL's default; a checkpoint or a validation pass
                                       // on one rank must not kill the job
};
// STOKER_AGREE_WARN (seconds, >= 1) and STOKER_AGREE_TIMEOUT (seconds, 0: wait forever),
// defaults 60 and 1800. Throws stoker::Error naming the variable when one is malformed.
AgreeWait agree_wait_from_environment();

// The line a waiting rank prints every `warn`; `missing` names the ranks it waits for
// ("rank 0", "ranks 2-3"). Rank 0 prints it while any rank is late, and rank 1 while rank
// 0 is: the others stay quiet, so a late rank costs two lines per interval, not a line per rank.
std::string agree_waiting_line(uint64_t rank, uint64_t epoch, const std::string& missing,
                               std::chrono::seconds waited, const AgreeWait& wait);
// What a rank says when the others did not all arrive within wait.timeout (`missing`: ""
// when this rank cannot tell who is missing).
std::string agree_timeout_text(uint64_t epoch, const std::string& missing, const AgreeWait& wait);

// The same for a rank waiting for rank 0's listing of the image folder `root`
// (shared_listing.hpp): rank 1 says it, the others stay quiet.
std::string listing_waiting_line(uint64_t rank, const std::string& root,
                                 std::chrono::seconds waited, const AgreeWait& wait);
std::string listing_timeout_text(const std::string& root, const AgreeWait& wait);

// The ranks of a world of `world_size` > 1 that cannot be checked (no MPI world, no
// torch.distributed): prints one line on stderr the first time in this process; returns
// the text stats() reports.
std::string note_unchecked_ranks(uint64_t rank, uint64_t world_size);

}  // namespace stoker
