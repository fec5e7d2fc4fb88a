#include "stoker/loader/loader_fields.hpp"

#include <limits>

#include "stoker/plan/limits.hpp"

namespace stoker {

namespace {

using Field = OptionField<LoaderOptions>;
constexpr uint64_t kAny = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxRaReps = 1024;  // recipes use 3 or 4; keeps size x ra_reps far from 2^64

uint64_t whole(const OptionValue& v) {
  return std::holds_alternative<uint64_t>(v) ? std::get<uint64_t>(v) : 0;  // None: 0
}

// A whole-number member; None (where the row allows it) sets 0, the member's "the plan's".
template <class M>
Field count(const char* name, M LoaderOptions::*member, uint64_t min, uint64_t max,
            const char* help, const char* none = nullptr, bool bench = true) {
  return {.name = name,
          .kind = OptionKind::Whole,
          .help = help,
          .min = min,
          .max = max,
          .none = none,
          .bench = bench,
          .set = [member](LoaderOptions& o,
                          const OptionValue& v) { o.*member = static_cast<M>(whole(v)); },
          .get = [member](const LoaderOptions& o) -> OptionValue {
            return static_cast<uint64_t>(o.*member);
          }};
}

Field flag(const char* name, bool LoaderOptions::*member, const char* help) {
  return {
      .name = name,
      .kind = OptionKind::Flag,
      .help = help,
      .set = [member](LoaderOptions& o, const OptionValue& v) { o.*member = std::get<bool>(v); },
      .get = [member](const LoaderOptions& o) -> OptionValue { return o.*member; }};
}

}  // namespace

const std::vector<Field>& loader_fields() {
  static const std::vector<Field> rows = {
      count("batch_size", &LoaderOptions::batch_size, 1, kAny, "Samples per batch"),
      flag("shuffle", &LoaderOptions::shuffle,
           "Shuffle each epoch: the order is a pure function of (seed, epoch, dataset size)"),
      count("seed", &LoaderOptions::seed, 0, kAny, "Shuffle and augmentation seed"),
      flag("drop_last", &LoaderOptions::drop_last,
           "Drop the last partial batch (and the uneven tail across ranks)"),
      count("world_size", &LoaderOptions::world_size, 1, kAny,
            "Ranks sharing the dataset (with rank)",
            "detected: a torch.distributed group, the launcher's variables, MPI"),
      count("rank", &LoaderOptions::rank, 0, kAny, "This rank, below world_size (with world_size)",
            "detected with world_size"),
      count("workers", &LoaderOptions::workers, 1, limits::kMaxWorkers,
            "Worker threads; beyond the plan's worker CPUs they spread over the rank's CPUs",
            "the plan's"),
      count("prefetch", &LoaderOptions::prefetch, 1, limits::kMaxPrefetch,
            "Starting depth of the prefetch ring, in batches for the whole rank", "the plan's"),
      count("max_depth", &LoaderOptions::max_depth, 0, limits::kMaxPrefetch,
            "Most the controller may grow the depth to (0: the plan's prefetch_max)"),
      flag("adaptive", &LoaderOptions::adaptive,
           "Let the prefetch depth move within [prefetch, max_depth]; false keeps it at prefetch"),
      count("held_batches", &LoaderOptions::held_batches, 1, limits::kMaxPrefetch,
            "Batches the consumer may keep alive beyond the ring", nullptr, false),
      flag("pin_threads", &LoaderOptions::pin_threads,
           "Pin worker i to its share of the plan's worker CPUs"),
      {.name = "on_corrupt",
       .kind = OptionKind::Choice,
       .help = "error: stop at a corrupt sample, naming its file; skip: leave it out (named once, "
               "counted)",
       .choices = {"error", "skip"},
       .bench = true,
       .set =
           [](LoaderOptions& o, const OptionValue& v) {
             o.on_corrupt =
                 std::get<std::string>(v) == "skip" ? CorruptPolicy::Skip : CorruptPolicy::Error;
           },
       .get = [](const LoaderOptions& o) -> OptionValue {
         return std::string(o.on_corrupt == CorruptPolicy::Skip ? "skip" : "error");
       }},
      {.name = "max_skip_fraction",
       .kind = OptionKind::Fraction,
       .help = "Under on_corrupt=skip, the largest share of an epoch's samples that may be "
               "corrupt (1.0: no limit)",
       .lo = 0.0,
       .hi = 1.0,
       .bench = true,
       .set = [](LoaderOptions& o,
                 const OptionValue& v) { o.max_skip_fraction = std::get<double>(v); },
       .get = [](const LoaderOptions& o) -> OptionValue { return o.max_skip_fraction; }},
      count("shuffle_buffer", &LoaderOptions::shuffle_buffer, 1, limits::kMaxShuffleBuffer,
            "Streamed shards: samples each rank holds to shuffle", "the plan's (its profile's)"),
      flag("agree", &LoaderOptions::agree,
           "Check at each epoch start that every rank agrees on seed, epoch and dataset"),
      // Repeated augmentation (torchvision's --ra-sampler --ra-reps N).
      count("ra_reps", &LoaderOptions::ra_reps, 1, kMaxRaReps,
            "Repeated augmentation (torchvision's RASampler): each sample N times in a row, each "
            "copy augmented apart, the epoch cut to floor(size / 256) * 256 / world_size samples "
            "per rank; 1: off. An epoch of no sample per rank (under 256 samples) is an error"),
  };
  return rows;
}

}  // namespace stoker
