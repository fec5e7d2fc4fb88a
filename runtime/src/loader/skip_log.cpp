#include "loader/skip_log.hpp"

#include <cstdio>

#include "stoker/loader/metrics.hpp"

namespace stoker {

SkipLog::SkipLog(const LoaderOptions& o)
    : max_fraction_(o.max_skip_fraction),
      names_(o.corrupt_names),
      verbose_(verbose_from_environment()) {
  if (!(o.max_skip_fraction >= 0.0 && o.max_skip_fraction <= 1.0)) {
    throw Error(names_.max_skip_fraction,
                "must be in 0..1, got " + std::to_string(o.max_skip_fraction),
                "e.g. 0.01 (the default): stop when more than 1 % of an epoch's samples are "
                "corrupt; 1: never stop");
  }
}

std::string SkipLog::error_todo() const {
  return "fix or remove the file, or use " + names_.skip + " to leave corrupt samples out";
}

void SkipLog::note(uint64_t index, const std::string& where, const std::string& what) {
  std::lock_guard lk(mu_);
  if (!named_.insert(index).second) return;
  if (files_.size() < kNamedFiles) files_.push_back(where);
  std::fprintf(stderr, "stoker: skipped corrupt sample %llu, %s: %s\n",
               static_cast<unsigned long long>(index), where.c_str(), what.c_str());
}

void SkipLog::note_warning(uint64_t index, const std::string& where, const std::string& what) {
  if (!verbose_) return;
  std::lock_guard lk(mu_);
  if (!warned_.insert(index).second) return;
  std::fprintf(stderr, "stoker: sample %llu, %s, decoded with a warning (%s), as PIL decodes it\n",
               static_cast<unsigned long long>(index), where.c_str(), what.c_str());
}

std::vector<std::string> SkipLog::files() const {
  std::lock_guard lk(mu_);
  return files_;
}

std::optional<Error> SkipLog::check(uint64_t epoch, uint64_t attempted, uint64_t skipped,
                                    bool epoch_end) const {
  if (skipped == 0 || attempted == 0 || (attempted < kSkipCheckAfter && !epoch_end)) return {};
  const double share = static_cast<double>(skipped) / static_cast<double>(attempted);
  if (share <= max_fraction_) return {};
  char what[256];
  std::snprintf(what, sizeof what,
                "%llu of the %llu samples of epoch %llu tried so far on this rank were corrupt "
                "and skipped (%.2f %%), more than %s %g allows",
                static_cast<unsigned long long>(skipped),
                static_cast<unsigned long long>(attempted), static_cast<unsigned long long>(epoch),
                100.0 * share, names_.max_skip_fraction.c_str(), max_fraction_);
  return Error("corrupt samples", what,
               "check the dataset (half-copied? mounted wrongly?) with the files named on "
               "stderr, or raise " +
                   names_.max_skip_fraction + " if this share is expected");
}

}  // namespace stoker
