#include "slurm_version.hpp"

#include <gtest/gtest.h>
#include <slurm/slurm_version.h>

namespace stoker::spank {
namespace {

TEST(SlurmVersion, BuiltForIsTheHeadersRelease) {
  const SlurmRelease built = built_for_release();
  EXPECT_EQ(built.major, SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER));
  EXPECT_EQ(built.minor, SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
  char running[32];
  std::snprintf(running, sizeof running, "%d.%02d.%d", built.major, built.minor,
                SLURM_VERSION_MICRO(SLURM_VERSION_NUMBER));
  EXPECT_EQ(slurm_release_mismatch(running, built), "") << running;
}

TEST(SlurmVersion, BugFixReleasesOfTheSameMajorMatch) {
  const SlurmRelease built{22, 5};
  EXPECT_EQ(built.to_string(), "22.05");
  for (const char* v : {"22.05.8", "22.05.11", "22.05", "22.05.0-0rc1", "22.5.2"})
    EXPECT_EQ(slurm_release_mismatch(v, built), "") << v;
}

TEST(FaultsSpank, AnotherSlurmReleaseIsRefusedWithOneLineSayingWhatToDo) {
  const SlurmRelease built{22, 5};
  EXPECT_EQ(slurm_release_mismatch("23.02.1", built),
            "stoker: this plugin was built for Slurm 22.05 but Slurm 23.02.1 is running: it "
            "stays unloaded (jobs run untuned, --stoker flags are unknown) until the "
            "stoker-slurm-plugin package built for Slurm 23.02 is installed, or stoker is "
            "rebuilt against its libslurm-dev");
  for (const char* v : {"21.08.8", "22.06.0", "23.05.0", "122.05.1"})
    EXPECT_NE(slurm_release_mismatch(v, built), "") << v;
}

TEST(FaultsSpank, AnUnreadableSlurmVersionIsRefused) {
  const SlurmRelease built{22, 5};
  for (const char* v : {"", "22", "22.", "x22.05", "22.05x", "22,05,8", ".05.8"}) {
    const std::string line = slurm_release_mismatch(v, built);
    EXPECT_NE(line, "") << "'" << v << "'";
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  }
  EXPECT_NE(slurm_release_mismatch("", built).find("does not say its version"), std::string::npos);
  EXPECT_NE(slurm_release_mismatch("22.", built).find("built for this Slurm"), std::string::npos);
}

}  // namespace
}  // namespace stoker::spank
