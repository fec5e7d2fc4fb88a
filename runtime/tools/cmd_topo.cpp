// `stoker topo`: what stoker sees of a node (this machine, or an hwloc XML file): NUMA nodes
// with their CPUs and memory, NVIDIA GPUs and NICs with their nearest NUMA node, distances.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command.hpp"
#include "node_svg.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::cli {

namespace {

struct Args {
  std::string topology, svg;
  bool json = false;
};

// What only the live machine can say: this process's CPU mask and memory limit.
struct ProcessView {
  bool present = false;
  CpuSet cpus;
  uint64_t memory_limit = 0;
};

std::string join_ints(const std::vector<int>& v) {
  return v.empty() ? "-" : join_numbers(v);
}

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  return buf;
}

const char* or_dash(const std::string& s) {
  return s.empty() ? "-" : s.c_str();
}

int cores_in(const Topology& t, int numa) {
  int n = 0;
  for (const Core& c : t.cores) n += c.numa == numa;
  return n;
}

nlohmann::json to_json(const Topology& t, const ProcessView& p) {
  using nlohmann::json;
  json j{{"source", t.source},
         {"is_this_system", t.is_this_system},
         {"all_cpus", t.all_cpus.to_string()},
         {"allowed_cpus", t.allowed_cpus.to_string()},
         {"complete_cpus", t.complete_cpus.to_string()},
         {"cores", t.cores.size()},
         {"smt_width", t.smt_width()},
         {"total_memory", t.total_memory},
         {"numa_distances", t.numa_distances}};
  json packages = json::array(), numa = json::array(), gpus = json::array(), nics = json::array();
  for (const Package& pk : t.packages)
    packages.push_back({{"index", pk.logical_index}, {"cpus", pk.cpus.to_string()}});
  for (const NumaNode& n : t.numa_nodes) {
    numa.push_back({{"os_index", n.os_index},
                    {"package", n.package},
                    {"cpus", n.cpus.to_string()},
                    {"cores", cores_in(t, n.os_index)},
                    {"pus", n.cpus.count()},
                    {"memory_bytes", n.memory_bytes},
                    {"subtype", n.subtype}});
  }
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    const Gpu& g = t.gpus[i];
    gpus.push_back({{"index", i},
                    {"pci_bus_id", g.pci_bus_id},
                    {"vendor", g.vendor},
                    {"device", g.device},
                    {"os_names", g.os_names},
                    {"numa", g.numa},
                    {"local_cpus", g.local_cpus.to_string()}});
  }
  for (const Nic& n : t.nics) {
    nics.push_back({{"name", n.name},
                    {"kind", n.kind},
                    {"pci_bus_id", n.pci_bus_id},
                    {"numa", n.numa},
                    {"local_cpus", n.local_cpus.to_string()}});
  }
  j["packages"] = packages;
  j["numa_nodes"] = numa;
  j["gpus"] = gpus;
  j["nics"] = nics;
  if (p.present) {
    j["process_cpus"] = p.cpus.to_string();
    j["memory_limit"] = p.memory_limit;
  }
  return j;
}

void print_distances(const Topology& t) {
  if (t.numa_distances.empty()) {
    std::printf("\nNUMA distances: not known\n");
    return;
  }
  std::printf("\nNUMA distances (hwloc relative latency, 10 = local):\n  %4s", "");
  for (const NumaNode& n : t.numa_nodes) std::printf(" %4d", n.os_index);
  std::printf("\n");
  for (const NumaNode& from : t.numa_nodes) {
    std::printf("  %4d", from.os_index);
    for (const NumaNode& to : t.numa_nodes) {
      int64_t d = t.numa_distance(from.os_index, to.os_index);
      if (d < 0)
        std::printf(" %4s", "?");
      else
        std::printf(" %4lld", static_cast<long long>(d));
    }
    std::printf("\n");
  }
}

void print_human(const Topology& t, const ProcessView& p) {
  std::printf("topology: %s\n", t.source.c_str());
  std::printf("  packages %zu, NUMA nodes %zu, cores %zu, PUs %d (SMT %d), memory %s\n",
              t.packages.size(), t.numa_nodes.size(), t.cores.size(), t.all_cpus.count(),
              t.smt_width(), gib(t.total_memory).c_str());
  std::printf("  PUs %s; allowed %s", or_dash(t.all_cpus.to_string()),
              or_dash(t.allowed_cpus.to_string()));
  if (t.complete_cpus.count() > t.all_cpus.count())
    std::printf("; not listed (offline or outside the captured cpuset) %s",
                (t.complete_cpus - t.all_cpus).to_string().c_str());
  std::printf("\n");
  if (p.present) {
    std::printf("  this process: CPUs %s, memory limit %s\n", or_dash(p.cpus.to_string()),
                gib(p.memory_limit).c_str());
  }

  const char* memory_only = "(memory only)";
  int w = static_cast<int>(std::string(memory_only).size());
  for (const NumaNode& n : t.numa_nodes)
    w = std::max(w, static_cast<int>(n.cpus.to_string().size()));
  std::printf("\n%-5s %-7s %-*s %5s %4s %12s  %s\n", "NUMA", "package", w, "CPUs", "cores", "PUs",
              "memory", "subtype");
  for (const NumaNode& n : t.numa_nodes) {
    std::printf("%-5d %-7s %-*s %5d %4d %12s  %s\n", n.os_index,
                n.package < 0 ? "-" : std::to_string(n.package).c_str(), w,
                n.cpus.empty() ? memory_only : n.cpus.to_string().c_str(), cores_in(t, n.os_index),
                n.cpus.count(), gib(n.memory_bytes).c_str(), or_dash(n.subtype));
  }

  std::printf("\n%-4s %-14s %-24s %s\n", "GPU", "PCI bus id", "names", "nearest NUMA");
  if (t.gpus.empty()) std::printf("(no NVIDIA GPU)\n");
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    const Gpu& g = t.gpus[i];
    std::printf("%-4zu %-14s %-24s %s\n", i, g.pci_bus_id.c_str(), or_dash(join(g.os_names)),
                join_ints(g.numa).c_str());
  }

  std::printf("\n%-12s %-11s %-14s %s\n", "NIC", "kind", "PCI bus id", "nearest NUMA");
  if (t.nics.empty()) std::printf("(no network device listed)\n");
  for (const Nic& n : t.nics) {
    std::printf("%-12s %-11s %-14s %s\n", n.name.c_str(), n.kind.c_str(), or_dash(n.pci_bus_id),
                join_ints(n.numa).c_str());
  }
  print_distances(t);
}

const Command topo_command(20, [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "topo", "Show the node as stoker sees it: NUMA nodes, cores, memory, GPUs, NICs");
  cmd->add_option("--topology", args->topology, "hwloc XML file of a node (default: this machine)");
  cmd->add_flag("--json", args->json, "one JSON object instead of the tables");
  cmd->add_option("--svg", args->svg, "also draw the node into this SVG file");
  cmd->callback([args] {
    ProcessView p;
    Topology t;
    if (args->topology.empty()) {
      t = load_topology();
      p = {true, current_cpu_mask(), memory_limit_bytes()};
    } else {
      t = load_topology_xml(args->topology);
    }
    if (args->json)
      std::printf("%s\n", to_json(t, p).dump(2).c_str());
    else
      print_human(t, p);
    if (!args->svg.empty()) {
      const std::string name = args->topology.empty()
                                   ? t.source
                                   : std::filesystem::path(args->topology).filename().string();
      write_svg(args->svg, node_svg(t, {}, name));
    }
  });
});

}  // namespace

}  // namespace stoker::cli
