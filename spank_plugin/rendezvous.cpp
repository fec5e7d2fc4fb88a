#include "rendezvous.hpp"

#include <netdb.h>
#include <unistd.h>

namespace stoker::spank {

std::string first_host(std::string_view nodelist) {
  // The first entry ends at the first comma outside brackets.
  int depth = 0;
  size_t end = 0;
  for (; end < nodelist.size(); ++end) {
    if (nodelist[end] == '[') ++depth;
    if (nodelist[end] == ']') --depth;
    if (nodelist[end] == ',' && depth == 0) break;
  }
  std::string_view entry = nodelist.substr(0, end);
  std::string host;
  // Expand every bracket group to its first value: "r[1-2]n[03-04]" -> "r1n03".
  while (!entry.empty()) {
    const size_t open = entry.find('[');
    if (open == std::string_view::npos) {
      host += entry;
      break;
    }
    host += entry.substr(0, open);
    const size_t close = entry.find(']', open);
    std::string_view range =
        entry.substr(open + 1, close == entry.npos ? entry.npos : close - open - 1);
    const size_t stop = range.find_first_of(",-");
    host += range.substr(0, stop);
    if (close == std::string_view::npos) break;
    entry.remove_prefix(close + 1);
  }
  return host;
}

std::string master_address(std::string_view nodelist) {
  const std::string host = first_host(nodelist);
  if (!host.empty()) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &res) == 0) {
      freeaddrinfo(res);
      return host;
    }
  }
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') return name;
  return host.empty() ? "127.0.0.1" : host;
}

int master_port(uint32_t job_id) {
  return 20000 + static_cast<int>(job_id % 20000);
}

}  // namespace stoker::spank
