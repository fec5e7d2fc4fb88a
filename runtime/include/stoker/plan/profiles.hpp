// Cluster-admin profiles: named sets of planner knobs, plus the caps that bound
// what users may ask for. File format (Slurm line style, like gres.conf):
//
//   # comment
//   Defaults DefaultProfile=balanced MaxWorkerFraction=0.9 MaxPrefetch=32 MaxMemShare=0.5
//   AllowOverride=yes Profile=cv WorkerFraction=0.8 PrefetchPerWorker=2 MemShare=0.25 PinMemory=yes
//
// Keys are case-sensitive, spelled as in the admin guide's tables ("Profiles and caps"); words are
// separated by spaces or tabs; a value may be double-quoted (Description="large images"); `#`
// outside quotes starts a comment. A file's profiles override built-ins of the same
// name (keys not given keep the built-in's value when the name exists, else the
// built-in `balanced` values).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "stoker/common/enum_names.hpp"
#include "stoker/plan/limits.hpp"

namespace stoker {

enum class PinMode { Auto, Yes, No };
inline constexpr EnumName<PinMode> kPinModeNames[] = {
    {PinMode::Auto, "auto"}, {PinMode::Yes, "yes"}, {PinMode::No, "no"}};
inline const char* to_string(PinMode m) {
  return name_of(kPinModeNames, m);
}
// The one parser of PinMemory= and --stoker-pin-memory; nullopt for anything else.
inline std::optional<PinMode> parse_pin_mode(std::string_view s) {
  return value_named(kPinModeNames, s);
}

struct Profile {
  std::string name;
  std::string description;
  double worker_fraction = 0.75;  // share of the rank's non-main cores used by workers
  int main_cores = 1;             // cores kept for the training loop
  int prefetch_per_worker = 2;    // batches in flight per worker
  int min_prefetch = limits::kDefaultPrefetch;  // whole-rank depth bounds
  int max_prefetch = 64;
  double mem_share = 0.25;  // share of the memory limit for the prefetch budget
  PinMode pin_memory = PinMode::Auto;
  int max_readers = 0;             // cap on concurrent readers (workers); 0 = none
  bool smt_as_cores = false;       // count SMT siblings as separate cores
  bool spill_cores = true;         // cores on nodes without a rank's GPU run the nearest workers
  uint64_t batch_bytes = 0;        // assumed batch size when no hint is given; 0 = 64 MiB
  bool stream = false;             // read tar shards as streams (large sequential reads)
  uint64_t shuffle_buffer = 1000;  // samples a streaming rank holds to shuffle

  bool operator==(const Profile&) const = default;
};

// The batch size assumed when neither the caller nor the profile gives one.
inline constexpr uint64_t kDefaultBatchBytes = uint64_t{64} << 20;

struct Caps {
  std::string default_profile = "balanced";
  double max_worker_fraction = 1.0;
  int max_prefetch = 256;
  double max_mem_share = 0.5;
  bool allow_override = true;

  bool operator==(const Caps&) const = default;
};

struct ProfileSet {
  std::map<std::string, Profile> profiles;
  Caps caps;
  // Where the file parsed put things, for `stoker plan --list`: the line of its Defaults line
  // (0: none) and of each profile it defines (built-ins it leaves alone are not listed).
  int caps_line = 0;
  std::map<std::string, int> file_lines;
  // Throws stoker::Error naming the profile and listing the known ones.
  const Profile& get(const std::string& name) const;
  bool has(const std::string& name) const { return profiles.count(name) != 0; }
  // The admin's default profile (caps.default_profile).
  const Profile& default_profile() const { return get(caps.default_profile); }
  std::string names() const;  // "balanced, cv, netfs, nlp"
};

ProfileSet builtin_profiles();
// Parses `text` over the built-ins. Throws stoker::Error with where = "FILE:LINE:COL"
// naming the offending word and what is allowed. Unknown keys are errors.
ProfileSet parse_profiles(std::string_view text, const std::string& filename);
// Reads and parses a file (over the built-ins). Throws stoker::Error when unreadable.
ProfileSet load_profiles(const std::string& path);
// The one rule of every reader (the plugin, `stoker plan`, the runtime, the doctor): the
// admin's profiles file when one is named (load_profiles), else the built-ins alone.
ProfileSet profiles_or_builtins(const std::optional<std::string>& file);

// "" when every knob of `p` is in its documented range, else what is wrong
// ("WorkerFraction=1.5 is not in (0,1]"). The parser, check_plan_input and the
// planner's own clamping use the same ranges.
std::string check_profile(const Profile& p);

}  // namespace stoker
