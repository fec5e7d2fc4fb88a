// What a Loader is built with (LoaderOptions) and what a corrupt sample does: the loader's
// vocabulary, below its façade (loader.hpp), so that the loader's own parts include it
// without the façade.
//
// Header only: plain data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "stoker/loader/host_pinner.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

// What a corrupt or truncated sample (a SampleError from the source or transform: a
// truncated, zero-byte or garbage file, or one that is not a JPEG or PNG) does.
//  Error: next() throws stoker::Error naming the file (and offset), the sample index, and
//         the option that changes the policy.
//  Skip:  the sample is left out, its file named once on stderr and counted in
//         stats().skipped (and stats().skipped_files); its batch comes with fewer samples
//         (Batch::size() < batch_size, possibly 0). No other sample is substituted, so every
//         rank still makes the same number of steps and no sample is seen twice. Too many
//         skips still stop the loop: see LoaderOptions::max_skip_fraction.
enum class CorruptPolicy { Error, Skip };

// Samples of an epoch attempted on a rank before max_skip_fraction is checked mid-epoch: one
// bad file among the first few samples is no verdict on the dataset.
inline constexpr uint64_t kSkipCheckAfter = 1000;

// How the front end that built the options spells them, for the messages that name them.
struct CorruptOptionNames {
  std::string skip = "on_corrupt = CorruptPolicy::Skip";
  std::string max_skip_fraction = "max_skip_fraction";
};

// Depths are in batches for the whole rank, each within 1..limits::kMaxPrefetch.
struct LoaderOptions {
  size_t batch_size = 0;   // required, > 0
  bool drop_last = false;  // drop the last partial batch, and let the sampler drop
                           // the uneven tail instead of padding it by wrapping
  bool shuffle = true;
  uint64_t seed = 0;
  uint64_t world_size = 0;  // the world: required by the constructor; for_this_process
  uint64_t rank = 0;        // detects it (detect_world: MPI, RANK/WORLD_SIZE, SLURM_*) when 0
  // Check at each loop's start that every rank agrees on the epoch (agree_on_epoch,
  // collective under MPI). false: this loader enters no collective, for a loader that one
  // rank uses alone (an evaluation loader on rank 0); world_size 1 enters none either.
  bool agree = true;
  CorruptPolicy on_corrupt = CorruptPolicy::Error;
  // Under Skip, the largest share of corrupt samples an epoch may have (0..1; 1: no limit).
  // Measured on each rank as skipped / attempted samples of the epoch so far, in delivery
  // order, once kSkipCheckAfter were attempted, and at the end of a shorter epoch; past it
  // next() throws stoker::Error. A half-copied or wrongly mounted dataset stops within its
  // first thousand samples; one bad file in 100 000 never does.
  double max_skip_fraction = 0.01;
  CorruptOptionNames corrupt_names;
  int workers = 0;  // 0: plan.workers; more than the plan's worker CPUs spread over
                    // the rank's CPUs (worker_shares)
  // The ring starts at `prefetch` and the controller moves it within [prefetch, max_depth];
  // the arena holds max_depth + held_batches slots, allocated and touched up front, and
  // they must fit plan.mem_budget (else stoker::Error; nothing is silently made shallower).
  int prefetch = 0;         // 0: plan.prefetch
  int max_depth = 0;        // 0: plan.prefetch_max (or `prefetch` when that is deeper)
  bool adaptive = true;     // false: the depth stays at `prefetch` (max_depth = prefetch)
  int held_batches = 2;     // batches the consumer may hold beyond the ring (Python
                            // tensors alive after their loop iteration); more is
                            // allowed but then the producers wait for releases
  bool pin_threads = true;  // bind each worker to its share (worker_shares)
  // for_this_process, when it plans (options.plan unset): pin the calling thread, the
  // training loop's, to the plan's main CPUs (pin_main_thread; a note when it cannot).
  bool pin_main_thread = true;
  uint64_t shuffle_buffer = 0;  // a streamed source (shard_stream.hpp): samples each
                                // rank holds to shuffle; 0: plan.shuffle_buffer
  uint64_t ra_reps = 1;         // repeated augmentation: SamplerOptions::ra_reps
  // The rank's plan: required by the constructor; for_this_process plans when unset.
  std::optional<Plan> plan;
  std::shared_ptr<HostPinner> pinner;  // page-locks the arena when plan.pin_memory
  // Pin through `pinner` even when the plan does not ask: for a caller that copies every
  // batch to a GPU of its choosing (Python's Loader(to_device=...)).
  bool force_pin = false;
};

}  // namespace stoker
