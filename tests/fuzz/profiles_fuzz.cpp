// The admin's profiles file (parse_profiles): every profile it gives must pass the same
// range check the planner relies on (check_profile), and the caps must name a profile.
#include "fuzz_support.hpp"
#include "stoker/plan/profiles.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  fuzz::expect_clean([&] {
    const ProfileSet set = parse_profiles(fuzz::as_text(data, size), "fuzz.conf");
    for (const auto& [name, profile] : set.profiles) {
      const std::string wrong = check_profile(profile);
      if (!wrong.empty())
        fuzz::finding("the parser accepted a profile out of range", name + ": " + wrong);
    }
    (void)set.default_profile();  // throws stoker::Error when it names no profile
  });
  return 0;
}
