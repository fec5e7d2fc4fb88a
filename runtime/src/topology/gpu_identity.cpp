// Slurm-style GPU ids -> topology GPUs, from /proc/driver/nvidia or PCI bus order.
#include "stoker/topology/gpu_identity.hpp"

#include <climits>
#include <filesystem>
#include <fstream>
#include <set>

#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace {

// The value after "key:" on the line that starts with `key`, trimmed; "" when absent.
std::string field(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() &&
        line[key.size()] == ':') {
      return trim(std::string_view(line).substr(key.size() + 1));
    }
  }
  return "";
}

bool parse_index(const std::string& s, int& out) {
  const auto v = values::parse_whole(s, 0, INT_MAX);
  if (v) out = static_cast<int>(*v);
  return v.has_value();
}

bool is_uuid_style(const std::string& id) {
  std::string l = lower(id);
  return l.rfind("gpu-", 0) == 0 || l.rfind("mig-", 0) == 0;
}

std::string id_range(size_t n) {
  if (n == 0) return "it has none";
  return n == 1 ? "ids: 0" : "ids: 0-" + std::to_string(n - 1);
}

}  // namespace

std::map<int, std::string> read_nvidia_device_minors(const std::string& dir) {
  std::map<int, std::string> minors;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string info = (it->path() / "information").string();
    int minor = -1;
    if (!parse_index(field(info, "Device Minor"), minor)) continue;
    // The directory is named after the PCI bus id; "Bus Location" says it too.
    std::string bus = field(info, "Bus Location");
    minors[minor] = lower(bus.empty() ? it->path().filename().string() : bus);
  }
  return minors;
}

GpuResolution resolve_gpu_ids(const Topology& topo, std::string_view ids,
                              const std::map<int, std::string>& minors) {
  GpuResolution r;
  std::string all = trim(ids);
  if (all.empty()) return r;
  auto fail = [&](const std::string& msg) {
    r.gpus.clear();
    r.error = msg;
    return r;
  };
  std::set<int> seen;
  for (std::string_view item : split(all, ',')) {
    const std::string id = trim(item);
    if (id.empty()) return fail("cannot locate GPU '': empty id in GPU list '" + all + "'");
    if (is_uuid_style(id)) {
      return fail("cannot locate GPU " + id +
                  ": UUID-style ids are not supported, only integer indices");
    }
    int n = -1;
    if (!parse_index(id, n)) {
      return fail("cannot locate GPU '" + id +
                  "': not a GPU index (expected integers such as 0,1)");
    }
    int index = -1;
    if (!minors.empty()) {
      auto m = minors.find(n);
      if (m == minors.end()) {
        return fail("cannot locate GPU " + id + ": the NVIDIA driver lists no device minor " + id +
                    " (it has " + std::to_string(minors.size()) + " GPUs)");
      }
      for (size_t g = 0; g < topo.gpus.size(); ++g) {
        if (topo.gpus[g].pci_bus_id == m->second) index = static_cast<int>(g);
      }
      if (index < 0) {
        return fail("cannot locate GPU " + id + ": device minor " + id + " is PCI " + m->second +
                    ", which is not an NVIDIA GPU in the topology (" + topo.source + ")");
      }
    } else {
      if (static_cast<size_t>(n) >= topo.gpus.size()) {
        return fail("cannot locate GPU " + id + ": the node has " +
                    std::to_string(topo.gpus.size()) + " NVIDIA GPUs (" +
                    id_range(topo.gpus.size()) + ")");
      }
      index = n;
    }
    if (!seen.insert(index).second) {
      return fail("cannot locate GPU " + id + ": listed twice in '" + all + "'");
    }
    r.gpus.push_back(index);
  }
  return r;
}

int gpu_for_local_rank(const std::vector<int>& visible, int local_rank) {
  if (visible.empty() || local_rank < 0) return -1;
  return visible[static_cast<size_t>(local_rank) % visible.size()];
}

}  // namespace stoker
