// Generated topology fixtures: hwloc 2.x XML text written by project code, so that the
// topology and planner tests do not depend on the shared folder. Load one with
// stoker::load_topology_xml_text(xml, name); check one by hand with
//   lstopo-no-graphics --input <(...)   or write it to a file first.
//
// Conventions shared by every builder:
// - cores are numbered in order package by package, NUMA node by NUMA node: node k's cores
//   follow node k-1's. With SMT, core c has PUs c and c + total_cores (siblings far apart, as
//   Linux numbers them on x86); without SMT core c has PU c.
// - every PCI device sits behind its own host bridge under the object of its NUMA node, so
//   hwloc reports exactly that node as its locality.
// - NUMA distances (when present): 10 local, 12 same package, 32 other package.
// - GPUs are NVIDIA (vendor 0x10de, class 0x0302) with OS devices cudaN and nvmlN, N = the
//   GPU's index in PCI bus order.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace stoker::test {

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

struct FixtureOsDev {
  std::string name;     // "cuda0", "mlx5_0", "eth0"
  int osdev_type = 0;   // hwloc: 1 GPU, 2 network, 3 OpenFabrics, 5 co-processor
  std::string subtype;  // "CUDA", "NVML", "" for none
};

struct FixturePci {
  std::string bus_id;  // "0000:07:00.0", lower-case
  unsigned vendor = 0, device = 0, class_id = 0;
  std::vector<FixtureOsDev> osdevs;
};

struct FixtureNode {
  int os_index = 0;
  int cores = 0;  // 0: a memory-only node (no CPUs)
  uint64_t memory_bytes = 0;
  std::string subtype;          // "MCDRAM", "" for ordinary memory
  std::vector<FixturePci> pci;  // devices local to this node
};

struct FixturePackage {
  std::vector<FixtureNode> nodes;
};

struct FixtureSpec {
  std::vector<FixturePackage> packages;
  bool smt = false;
  bool distances = true;
  // PUs left out of the machine's allowed_cpuset (as a Slurm/cgroup cpuset would); they stay
  // in the topology because stoker loads with HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED.
  std::vector<int> disallowed_pus;
};

// An NVIDIA A100-like GPU with its cudaN / nvmlN OS devices.
inline FixturePci fixture_nvidia_gpu(const std::string& bus_id, int index) {
  std::string n = std::to_string(index);
  return {bus_id, 0x10de, 0x20b0, 0x0302, {{"cuda" + n, 5, "CUDA"}, {"nvml" + n, 1, "NVML"}}};
}
// A Mellanox ConnectX HCA: one OpenFabrics OS device mlx5_N.
inline FixturePci fixture_mellanox_hca(const std::string& bus_id, int index) {
  return {bus_id, 0x15b3, 0x101b, 0x0207, {{"mlx5_" + std::to_string(index), 3, ""}}};
}
// An Intel Ethernet port: one network OS device.
inline FixturePci fixture_ethernet(const std::string& bus_id, const std::string& name) {
  return {bus_id, 0x8086, 0x1521, 0x0200, {{name, 2, ""}}};
}

namespace fixture_detail {

// hwloc bitmap text: 32-bit hex words, most significant first ("0x00000001,0xffffffff").
inline std::string bitmap(const std::vector<int>& bits) {
  int top = -1;
  for (int b : bits) top = b > top ? b : top;
  if (top < 0) return "0x0";
  std::vector<uint32_t> words(static_cast<size_t>(top / 32 + 1), 0);
  for (int b : bits) words[static_cast<size_t>(b / 32)] |= uint32_t{1} << (b % 32);
  std::string s;
  for (size_t i = words.size(); i-- > 0;) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", words[i]);
    s += buf;
    if (i) s += ",";
  }
  return s;
}

inline std::string hex4(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

class Writer {
 public:
  explicit Writer(const FixtureSpec& spec) : spec_(spec) {
    for (const auto& p : spec.packages)
      for (const auto& n : p.nodes) total_cores_ += n.cores;
  }

  std::string xml() {
    std::vector<int> all_pus, all_nodes;
    int core = 0;
    for (const auto& p : spec_.packages)
      for (const auto& n : p.nodes) {
        append(all_pus, pus(core, n.cores));
        core += n.cores;
        all_nodes.push_back(n.os_index);
      }
    out_ =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
        "<topology version=\"2.0\">\n";
    std::vector<int> allowed;
    for (int pu : all_pus) {
      bool hidden = false;
      for (int d : spec_.disallowed_pus) hidden = hidden || d == pu;
      if (!hidden) allowed.push_back(pu);
    }
    out_ += "  <object type=\"Machine\" os_index=\"0\"" + sets(all_pus, all_nodes) +
            " allowed_cpuset=\"" + bitmap(allowed) + "\" allowed_nodeset=\"" + bitmap(all_nodes) +
            "\"" + gp() + ">\n";
    core = 0;
    for (size_t i = 0; i < spec_.packages.size(); ++i) package(static_cast<int>(i), core);
    out_ += "  </object>\n";
    if (spec_.distances && all_nodes.size() > 1) distances();
    out_ += "</topology>\n";
    return out_;
  }

 private:
  static void append(std::vector<int>& a, const std::vector<int>& b) {
    a.insert(a.end(), b.begin(), b.end());
  }
  std::vector<int> pus(int first_core, int cores) const {
    std::vector<int> v;
    for (int c = first_core; c < first_core + cores; ++c) {
      v.push_back(c);
      if (spec_.smt) v.push_back(c + total_cores_);
    }
    return v;
  }
  static std::string sets(const std::vector<int>& cpus, const std::vector<int>& nodes) {
    std::string c = bitmap(cpus), n = bitmap(nodes);
    return " cpuset=\"" + c + "\" complete_cpuset=\"" + c + "\" nodeset=\"" + n +
           "\" complete_nodeset=\"" + n + "\"";
  }
  std::string gp() { return " gp_index=\"" + std::to_string(++gp_) + "\""; }
  static std::string pad(int depth) { return std::string(static_cast<size_t>(depth) * 2, ' '); }

  void package(int index, int& core) {
    const FixturePackage& p = spec_.packages[static_cast<size_t>(index)];
    std::vector<int> cpus, nodes;
    int c = core;
    for (const auto& n : p.nodes) {
      append(cpus, pus(c, n.cores));
      c += n.cores;
      nodes.push_back(n.os_index);
    }
    out_ += pad(2) + "<object type=\"Package\" os_index=\"" + std::to_string(index) + "\"" +
            sets(cpus, nodes) + gp() + ">\n";
    if (p.nodes.size() == 1) {
      node_body(p.nodes[0], core, 3);  // the node attaches to the package itself
    } else {
      // One Group per NUMA node (as hwloc shows AMD NPS4 or Intel SNC).
      for (const auto& n : p.nodes) {
        out_ += pad(3) + "<object type=\"Group\"" + sets(pus(core, n.cores), {n.os_index}) +
                " kind=\"1000\" subkind=\"0\"" + gp() + ">\n";
        node_body(n, core, 4);
        out_ += pad(3) + "</object>\n";
      }
    }
    out_ += pad(2) + "</object>\n";
  }

  // The NUMA node (memory child), its cores, then its PCI devices: hwloc's XML order.
  void node_body(const FixtureNode& n, int& core, int depth) {
    std::vector<int> cpus = pus(core, n.cores);
    out_ += pad(depth) + "<object type=\"NUMANode\" os_index=\"" + std::to_string(n.os_index) +
            "\"" + sets(cpus, {n.os_index}) + gp() +
            (n.subtype.empty() ? "" : " subtype=\"" + n.subtype + "\"") + " local_memory=\"" +
            std::to_string(n.memory_bytes) + "\"/>\n";
    for (int c = core; c < core + n.cores; ++c) {
      std::vector<int> threads = pus(c, 1);
      out_ += pad(depth) + "<object type=\"Core\" os_index=\"" + std::to_string(c) + "\"" +
              sets(threads, {n.os_index}) + gp() + ">\n";
      for (int pu : threads) {
        out_ += pad(depth + 1) + "<object type=\"PU\" os_index=\"" + std::to_string(pu) + "\"" +
                sets({pu}, {n.os_index}) + gp() + "/>\n";
      }
      out_ += pad(depth) + "</object>\n";
    }
    core += n.cores;
    for (const auto& d : n.pci) pci(d, depth);
  }

  void pci(const FixturePci& d, int depth) {
    std::string domain = d.bus_id.substr(0, 4), bus = d.bus_id.substr(5, 2);
    out_ += pad(depth) + "<object type=\"Bridge\"" + gp() +
            " bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"" + domain + ":[" + bus + "-" + bus +
            "]\">\n";
    out_ += pad(depth + 1) + "<object type=\"PCIDev\"" + gp() + " pci_busid=\"" + d.bus_id +
            "\" pci_type=\"" + hex4(d.class_id) + " [" + hex4(d.vendor) + ":" + hex4(d.device) +
            "] [" + hex4(d.vendor) + ":0000] 00\" pci_link_speed=\"15.753846\">\n";
    for (const auto& os : d.osdevs) {
      out_ += pad(depth + 2) + "<object type=\"OSDev\"" + gp() + " name=\"" + os.name + "\"" +
              (os.subtype.empty() ? "" : " subtype=\"" + os.subtype + "\"") + " osdev_type=\"" +
              std::to_string(os.osdev_type) + "\"/>\n";
    }
    out_ += pad(depth + 1) + "</object>\n" + pad(depth) + "</object>\n";
  }

  // A latency matrix in os indexing; hwloc writes at most 10 numbers per element.
  void distances() {
    std::vector<std::pair<int, int>> nodes;  // (os_index, package)
    for (size_t p = 0; p < spec_.packages.size(); ++p)
      for (const auto& n : spec_.packages[p].nodes) nodes.push_back({n.os_index, int(p)});
    std::vector<std::string> idx, val;
    for (const auto& a : nodes) {
      idx.push_back(std::to_string(a.first));
      for (const auto& b : nodes)
        val.push_back(a.first == b.first ? "10" : a.second == b.second ? "12" : "32");
    }
    out_ += "  <distances2 type=\"NUMANode\" nbobjs=\"" + std::to_string(nodes.size()) +
            "\" kind=\"5\" name=\"NUMALatency\" indexing=\"os\">\n";
    chunks("indexes", idx);
    chunks("u64values", val);
    out_ += "  </distances2>\n";
  }
  void chunks(const std::string& tag, const std::vector<std::string>& words) {
    for (size_t i = 0; i < words.size(); i += 10) {
      std::string text;
      for (size_t j = i; j < words.size() && j < i + 10; ++j) text += words[j] + " ";
      out_ += "    <" + tag + " length=\"" + std::to_string(text.size()) + "\">" + text + "</" +
              tag + ">\n";
    }
  }

  const FixtureSpec& spec_;
  int total_cores_ = 0;
  int gp_ = 0;
  std::string out_;
};

}  // namespace fixture_detail

// The hwloc 2.x XML text of `spec` (layout rules in the comment at the top of this file).
inline std::string build_fixture_xml(const FixtureSpec& spec) {
  return fixture_detail::Writer(spec).xml();
}

// DGX-A100-like node. 2 packages x 4 NUMA nodes (os 0-3 in package 0, 4-7 in package 1),
// 16 cores per node (node k: cores 16k..16k+15), 128 cores, SMT: core c = PUs c and c+128
// (256 PUs). 128 GiB per node. 8 GPUs in PCI order, with their NUMA node:
//   GPU0 0000:07:00.0 NUMA3   GPU1 0000:0f:00.0 NUMA3   (HCA mlx5_0 0000:0c:00.0 NUMA3)
//   GPU2 0000:47:00.0 NUMA1   GPU3 0000:4e:00.0 NUMA1   (HCA mlx5_1 0000:4b:00.0 NUMA1)
//   GPU4 0000:87:00.0 NUMA7   GPU5 0000:90:00.0 NUMA7   (HCA mlx5_2 0000:8b:00.0 NUMA7)
//   GPU6 0000:b7:00.0 NUMA5   GPU7 0000:bd:00.0 NUMA5   (HCA mlx5_3 0000:ba:00.0 NUMA5)
// NUMA nodes 0, 2, 4, 6 have no GPU and no HCA. Distances 10 / 12 / 32.
inline std::string dgx_a100_like() {
  FixtureSpec s;
  s.smt = true;
  s.packages.resize(2);
  for (int k = 0; k < 8; ++k) s.packages[k / 4].nodes.push_back({k, 16, 128 * kGiB, "", {}});
  struct Pair {
    int numa;
    const char* gpu_a;
    const char* gpu_b;
    const char* hca;
  };
  const Pair pairs[] = {{3, "0000:07:00.0", "0000:0f:00.0", "0000:0c:00.0"},
                        {1, "0000:47:00.0", "0000:4e:00.0", "0000:4b:00.0"},
                        {7, "0000:87:00.0", "0000:90:00.0", "0000:8b:00.0"},
                        {5, "0000:b7:00.0", "0000:bd:00.0", "0000:ba:00.0"}};
  for (int i = 0; i < 4; ++i) {
    auto& node = s.packages[pairs[i].numa / 4].nodes[pairs[i].numa % 4];
    node.pci.push_back(fixture_nvidia_gpu(pairs[i].gpu_a, 2 * i));
    node.pci.push_back(fixture_mellanox_hca(pairs[i].hca, i));
    node.pci.push_back(fixture_nvidia_gpu(pairs[i].gpu_b, 2 * i + 1));
  }
  return build_fixture_xml(s);
}

// 4-GPU 2-socket node. 2 packages x 1 NUMA node (os 0, 1), 16 cores each (32 cores);
// SMT on: core c = PUs c and c+32 (64 PUs); off: 32 PUs. 96 GiB per node.
//   NUMA0: GPU0 0000:1a:00.0, GPU1 0000:3d:00.0, mlx5_0 0000:18:00.0, eno1 0000:04:00.0
//   NUMA1: GPU2 0000:88:00.0, GPU3 0000:b1:00.0, mlx5_1 0000:86:00.0
// Distances 10 / 32.
inline std::string four_gpu_two_socket(bool smt) {
  FixtureSpec s;
  s.smt = smt;
  s.packages.resize(2);
  s.packages[0].nodes.push_back(
      {0,
       16,
       96 * kGiB,
       "",
       {fixture_ethernet("0000:04:00.0", "eno1"), fixture_mellanox_hca("0000:18:00.0", 0),
        fixture_nvidia_gpu("0000:1a:00.0", 0), fixture_nvidia_gpu("0000:3d:00.0", 1)}});
  s.packages[1].nodes.push_back(
      {1,
       16,
       96 * kGiB,
       "",
       {fixture_mellanox_hca("0000:86:00.0", 1), fixture_nvidia_gpu("0000:88:00.0", 2),
        fixture_nvidia_gpu("0000:b1:00.0", 3)}});
  return build_fixture_xml(s);
}

// CPU-only node: 1 package, 1 NUMA node (os 0) with `cores` cores and 32 GiB, no GPU, no NIC,
// no distance matrix. SMT on: core c = PUs c and c+cores; off: PU c.
inline std::string cpu_only_single_numa(int cores, bool smt) {
  FixtureSpec s;
  s.smt = smt;
  s.distances = false;
  s.packages.resize(1);
  s.packages[0].nodes.push_back({0, cores, 32 * kGiB, "", {}});
  return build_fixture_xml(s);
}

// A GPU on a memory-only NUMA node (CXL-like: memory and PCI, no cores). No SMT.
//   package 0: NUMA0, cores 0-7 (PUs 0-7), 64 GiB, GPU0 0000:3b:00.0
//   package 1: NUMA1, cores 8-15 (PUs 8-15), 64 GiB
//              NUMA2, no cores, 256 GiB, GPU1 0000:af:00.0, mlx5_0 0000:ae:00.0
// Distances 10 / 12 / 32: NUMA2's nearest node with cores is NUMA1 (12), then NUMA0 (32).
inline std::string gpu_on_memory_only_numa() {
  FixtureSpec s;
  s.packages.resize(2);
  s.packages[0].nodes.push_back({0, 8, 64 * kGiB, "", {fixture_nvidia_gpu("0000:3b:00.0", 0)}});
  s.packages[1].nodes.push_back({1, 8, 64 * kGiB, "", {}});
  s.packages[1].nodes.push_back(
      {2,
       0,
       256 * kGiB,
       "",
       {fixture_mellanox_hca("0000:ae:00.0", 0), fixture_nvidia_gpu("0000:af:00.0", 1)}});
  return build_fixture_xml(s);
}

}  // namespace stoker::test
