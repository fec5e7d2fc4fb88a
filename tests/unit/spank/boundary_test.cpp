// The plugin's C boundary (boundary.hpp): the one line Slurm logs for an exception that
// escaped a callback. For a flag at submit time it is what sbatch and srun show the user.
#include "boundary.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "error_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::spank {
namespace {

// The boundary's line for what set_user_option and validate_user_options throw.
std::string line_for(const std::string& flag, const std::string& value,
                     const ProfileSet& profiles) {
  UserOptions opts;
  try {
    set_user_option(opts, flag, value);
    validate_user_options(opts, profiles);
  } catch (const std::exception& e) {
    return boundary_line(flag, e);
  }
  return "(accepted)";
}

// Before, the parser returned a line that carried its own "stoker: ", so the task's warning
// in slurmstepd, which adds its own, read "stoker: warning: rank 0: stoker: --stoker-...".
// The parser now throws a stoker::Error without it, and each printer adds it once: this
// boundary at submit time, and stepd.cpp's warn_untuned ("stoker: warning: rank N: " +
// what()).
TEST(FaultsBoundary, ABadFlagIsOneLineNamingTheFlagWithOnePrefix) {
  UserOptions opts;
  EXPECT_EQ(test::error_text([&] { set_user_option(opts, "stoker-workers", "abc"); }),
            "--stoker-workers=abc: expected auto or a whole number from 1 to 1024");
  const ProfileSet builtins = builtin_profiles();
  EXPECT_EQ(line_for("stoker-workers", "abc", builtins),
            "stoker: --stoker-workers=abc: expected auto or a whole number from 1 to 1024");
  EXPECT_EQ(line_for("stoker-profile", "video", builtins),
            "stoker: --stoker-profile=video: unknown profile; the admin's profiles are "
            "balanced, cv, netfs, nlp");
  const ProfileSet capped = parse_profiles("Defaults MaxPrefetch=32", "site.conf");
  EXPECT_EQ(line_for("stoker-prefetch", "33", capped),
            "stoker: --stoker-prefetch=33: over the admin's cap MaxPrefetch=32");
  EXPECT_EQ(line_for("stoker-prefetch", "32", capped), "(accepted)");
}

TEST(FaultsBoundary, AnythingElseIsNamedByTheCallbackItEscaped) {
  EXPECT_EQ(boundary_line("init", Error("", "no topology")), "stoker: init: no topology");
  EXPECT_EQ(boundary_line("task_init", std::runtime_error("bad_alloc")),
            "stoker: task_init: bad_alloc");
  EXPECT_EQ(boundary_line("init", Error("--stoker-bind", "Slurm refused to register it")),
            "stoker: --stoker-bind: Slurm refused to register it");
}

}  // namespace
}  // namespace stoker::spank
