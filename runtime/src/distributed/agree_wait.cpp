#include "stoker/distributed/agree_wait.hpp"

#include <cstdio>
#include <mutex>
#include <string>

#include "stoker/common/launch_env.hpp"
#include "stoker/distributed/world.hpp"

namespace stoker {

namespace {
std::string seconds_text(std::chrono::seconds s) {
  return std::to_string(s.count()) + " s";
}

std::string limit_text(const AgreeWait& wait) {
  return wait.timeout.count() == 0
             ? "waiting as long as it takes (STOKER_AGREE_TIMEOUT=0)"
             : "giving up after " + seconds_text(wait.timeout) + " (STOKER_AGREE_TIMEOUT)";
}

constexpr uint64_t kMaxAgreeSeconds = 7 * 24 * 3600;  // a week: bounds both variables
}  // namespace

// The one place that reads the two variables.
AgreeWait agree_wait_from_environment() {
  const EnvGetter env = process_env();
  AgreeWait wait;
  if (auto warn = env_whole(env, "STOKER_AGREE_WARN", 1, kMaxAgreeSeconds)) {
    wait.warn = std::chrono::seconds(*warn);
  }
  if (auto timeout = env_whole(env, "STOKER_AGREE_TIMEOUT", 0, kMaxAgreeSeconds)) {
    wait.timeout = std::chrono::seconds(*timeout);
  }
  return wait;
}

std::string agree_waiting_line(uint64_t rank, uint64_t epoch, const std::string& missing,
                               std::chrono::seconds waited, const AgreeWait& wait) {
  return "stoker: rank " + std::to_string(rank) + ": agree_on_epoch: waited " +
         seconds_text(waited) + " at the start of epoch " + std::to_string(epoch) + " for " +
         missing + " (busy checkpointing or validating, or hung?); " + limit_text(wait) +
         ", a note every " + seconds_text(wait.warn) + " (STOKER_AGREE_WARN)";
}

std::string agree_timeout_text(uint64_t epoch, const std::string& missing, const AgreeWait& wait) {
  return "not every rank arrived within " + seconds_text(wait.timeout) + " at the start of epoch " +
         std::to_string(epoch) + (missing.empty() ? "" : " (missing: " + missing + ")") +
         ": a rank hung, crashed or skipped the epoch's start; STOKER_AGREE_TIMEOUT sets the "
         "limit (0: wait forever)";
}

std::string listing_waiting_line(uint64_t rank, const std::string& root,
                                 std::chrono::seconds waited, const AgreeWait& wait) {
  return "stoker: rank " + std::to_string(rank) + ": waited " + seconds_text(waited) +
         " for rank 0's listing of " + root +
         " (a first listing of a million files on a network filesystem takes minutes; "
         "rank 0 keeps it in STOKER_CACHE_DIR for the next jobs); " +
         limit_text(wait) + ", a note every " + seconds_text(wait.warn) + " (STOKER_AGREE_WARN)";
}

std::string listing_timeout_text(const std::string& root, const AgreeWait& wait) {
  return "rank 0 did not send its listing of " + root + " within " + seconds_text(wait.timeout) +
         ": it hung, crashed, or does not build this loader; STOKER_AGREE_TIMEOUT sets the "
         "limit (0: wait forever)";
}

std::string note_unchecked_ranks(uint64_t rank, uint64_t world_size) {
  const std::string unusable = mpi_unusable_reason();
  if (!unusable.empty()) {  // detect_world said it in its one line
    return "not checked: MPI is not usable here (" + unusable +
           ") and no torch.distributed process group";
  }
  const std::string text = "not checked: no MPI world and no torch.distributed process group";
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "stoker: rank %llu of %llu: nothing checks that the ranks agree on the seed, "
                 "epoch and dataset (%s): launch under MPI, or call "
                 "torch.distributed.init_process_group before the first epoch\n",
                 static_cast<unsigned long long>(rank), static_cast<unsigned long long>(world_size),
                 text.c_str());
  });
  return text;
}

}  // namespace stoker
