#include "sources/cache_dir.hpp"

#include "stoker/common/launch_env.hpp"

namespace stoker {

std::string cache_dir(const std::string& kind) {
  const EnvGetter env = process_env();
  if (const auto dir = env("STOKER_CACHE_DIR")) {
    return dir->empty() || *dir == "none" ? std::string() : *dir + "/" + kind;
  }
  if (const auto xdg = env_nonempty(env, "XDG_CACHE_HOME")) return *xdg + "/stoker/" + kind;
  if (const auto home = env_nonempty(env, "HOME")) return *home + "/.cache/stoker/" + kind;
  return {};
}

}  // namespace stoker
