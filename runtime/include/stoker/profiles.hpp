// Cluster-admin profiles: named sets of planner knobs, plus the caps that bound
// what users may ask for. File format (Slurm line style, like gres.conf):
//
//   # comment
//   Defaults DefaultProfile=balanced MaxWorkerFraction=0.9 MaxPrefetch=32 MaxMemShare=0.5 AllowOverride=yes
//   Profile=cv WorkerFraction=0.8 PrefetchPerWorker=2 MemShare=0.25 PinMemory=yes
//
// A file's profiles override built-ins of the same name (keys not given keep the
// built-in's value when the name exists, else the `balanced` values).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace stoker {

enum class PinMode { Auto, Yes, No };

struct Profile {
  std::string name;
  std::string description;
  double worker_fraction = 0.75;   // share of the rank's non-main cores used by workers
  int main_cores = 1;              // cores kept for the training loop
  int prefetch_per_worker = 2;     // batches in flight per worker
  int min_prefetch = 2;            // whole-rank depth bounds
  int max_prefetch = 64;
  double mem_share = 0.25;         // share of the memory limit for the prefetch budget
  PinMode pin_memory = PinMode::Auto;
  int max_readers = 0;             // cap on concurrent readers (workers); 0 = none
  bool smt_as_cores = false;       // count SMT siblings as separate cores
  uint64_t batch_bytes = 0;        // assumed batch size when no hint is given; 0 = 64 MiB
};

struct Caps {
  std::string default_profile = "balanced";
  double max_worker_fraction = 1.0;
  int max_prefetch = 256;
  double max_mem_share = 0.5;
  bool allow_override = true;
};

struct ProfileSet {
  std::map<std::string, Profile> profiles;
  Caps caps;
  // Throws stoker::Error naming the profile and listing the known ones.
  const Profile& get(const std::string& name) const;
  std::string names() const;  // "balanced, cv, netfs, nlp"
};

ProfileSet builtin_profiles();
// Parses `text` over the built-ins. Throws stoker::Error with where = "FILE:LINE:COL"
// naming the offending word and what is allowed. Unknown keys are errors.
ProfileSet parse_profiles(std::string_view text, const std::string& filename);
// Reads and parses a file (over the built-ins). Throws stoker::Error when unreadable.
ProfileSet load_profiles(const std::string& path);

const char* to_string(PinMode m);

}  // namespace stoker
