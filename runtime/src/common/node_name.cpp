#include "stoker/common/node_name.hpp"

#include <unistd.h>

namespace stoker {

std::string node_name(const EnvGetter& env) {
  if (auto slurm = env_nonempty(env, "SLURMD_NODENAME")) return *slurm;
  char host[256] = {};
  return ::gethostname(host, sizeof host - 1) == 0 ? host : "";
}

}  // namespace stoker
