// The corrupt-sample policy's bookkeeping (LoaderOptions::on_corrupt, max_skip_fraction):
// the message for the Error policy, the files skipped under Skip (each named once on
// stderr), and the check that an epoch's share of skipped samples stays in bounds.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/loader/loader_options.hpp"

namespace stoker {

class SkipLog {
 public:
  static constexpr size_t kNamedFiles = 1000;  // kept for stats(); stderr names them all
  // What to do about a failure that is no SampleError (the policy does not cover it).
  static constexpr const char* kNotCorrupt =
      "fix or remove the sample; on_corrupt covers corrupt samples, not this failure";

  // Throws stoker::Error for a max_skip_fraction outside [0, 1].
  explicit SkipLog(const LoaderOptions& options);

  // What to do about a corrupt sample under the Error policy (names the option to change).
  std::string error_todo() const;
  // Any thread: sample `index`, at `where`, was left out because of `what`. The first time
  // for an index, names it on stderr and keeps it for files().
  void note(uint64_t index, const std::string& where, const std::string& what);
  // Any thread: sample `index`, at `where`, was decoded although its decoder warned
  // (`what`): under --stoker-verbose, named on stderr the first time for an index.
  void note_warning(uint64_t index, const std::string& where, const std::string& what);
  std::vector<std::string> files() const;  // the first kNamedFiles named, in that order

  // The consumer's running count of one epoch (delivered batches only). An Error when the
  // share of skipped samples is past max_skip_fraction (see LoaderOptions).
  std::optional<Error> check(uint64_t epoch, uint64_t attempted, uint64_t skipped,
                             bool epoch_end) const;

 private:
  double max_fraction_;
  CorruptOptionNames names_;
  mutable std::mutex mu_;
  std::unordered_set<uint64_t> named_, warned_;
  bool verbose_ = false;
  std::vector<std::string> files_;
};

}  // namespace stoker
