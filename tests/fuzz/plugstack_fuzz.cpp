// The plugin's plugstack.conf arguments (parse_plugin_args), one per line, and the user's
// --stoker-* flags (set_user_option: the first '=' splits flag and value), checked against
// the built-in profiles as srun does (validate_user_options).
#include "fuzz_support.hpp"
#include "plugin_config.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/user_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  const std::vector<std::string> lines = fuzz::lines_of(fuzz::as_text(data, size));
  fuzz::expect_clean([&] { (void)spank::parse_plugin_args(lines); });
  fuzz::expect_clean([&] {
    UserOptions opts;
    for (const std::string& line : lines) {
      const size_t eq = line.find('=');
      const std::string flag = line.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
      set_user_option(opts, flag, value);  // a refusal is a stoker::Error: the expected answer
    }
    validate_user_options(opts, builtin_profiles());
  });
  return 0;
}
