// Shared helpers for the planner tests: fixture topologies, PlanInput builders, a sample plan.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "stoker/plan/plan.hpp"
#include "stoker/plan/task_facts.hpp"
#include "stoker/topology/topology.hpp"
#include "topology_fixtures.hpp"

namespace stoker::test {

inline std::shared_ptr<Topology> fixture(const std::string& xml, const std::string& name) {
  return std::make_shared<Topology>(load_topology_xml_text(xml, name));
}

// One rank's input: every local rank r uses GPU gpus[r % gpus.size()] (none if empty).
inline PlanInput input_for(const Topology& topo, int rank, int size, std::vector<int> gpus = {},
                           CpuSet allowed = {}) {
  PlanInput in;
  in.topology = &topo;
  in.allowed = allowed.empty() ? topo.allowed_cpus : allowed;
  in.local_rank = rank;
  in.local_size = size;
  if (!gpus.empty())
    for (int r = 0; r < size; ++r) in.local_gpus.push_back(gpus[r % gpus.size()]);
  in.mem_limit = uint64_t{64} << 30;
  in.profile = builtin_profiles().get("balanced");
  return in;
}

// A plan whose every field differs from its default.
inline Plan sample_plan() {
  Plan p;
  p.profile = "cv";
  p.local_rank = 2;
  p.local_size = 4;
  p.cpus = CpuSet::parse("8-15,136-143");
  p.main_cpus = CpuSet::parse("8,136");
  p.worker_cpus = CpuSet::parse("9-15,137-143");
  p.numa = {1, 3};
  p.workers = 6;
  p.prefetch = 12;
  p.prefetch_max = 48;
  p.mem_budget = 34359738368ull;
  p.batch_bytes = 134217728;
  p.pin_memory = true;
  p.stream = true;
  p.shuffle_buffer = 512;
  p.gpu = "0000:47:00.0";
  p.nics = {"mlx5_1", "eth0"};
  p.bind = BindMode::Even;
  p.mem_bind = MemBind::None;
  return p;
}

inline std::vector<Plan> plan_all(PlanInput in) {
  std::vector<Plan> plans;
  for (int r = 0; r < in.local_size; ++r) {
    in.local_rank = r;
    plans.push_back(make_plan(in));
  }
  return plans;
}

struct NamedTopology {
  std::string name;
  std::shared_ptr<Topology> topo;
};

// The generated fixtures, then every XML of the shared topologies folder (none where it is
// absent: the generated ones still carry the suite); prints how many it found.
inline std::vector<NamedTopology> all_topologies() {
  std::vector<NamedTopology> out = {
      {"dgx-a100", fixture(dgx_a100_like(), "dgx-a100")},
      {"4gpu-smt", fixture(four_gpu_two_socket(true), "4gpu-smt")},
      {"4gpu", fixture(four_gpu_two_socket(false), "4gpu")},
      {"cpu-smt", fixture(cpu_only_single_numa(12, true), "cpu-smt")},
      {"cpu", fixture(cpu_only_single_numa(6, false), "cpu")},
      {"cxl", fixture(gpu_on_memory_only_numa(), "cxl")},
  };
  const size_t generated = out.size();
  const std::filesystem::path dir = STOKER_SHARED_DIR "/topologies";
  std::vector<std::filesystem::path> xmls;
  if (std::filesystem::is_directory(dir))
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".xml") xmls.push_back(e.path());
  std::sort(xmls.begin(), xmls.end());
  for (const auto& x : xmls)
    out.push_back({x.stem().string(), std::make_shared<Topology>(load_topology_xml(x.string()))});
  std::printf("planner fixtures: %zu generated, %zu shared XMLs from %s\n", generated, xmls.size(),
              dir.c_str());
  return out;
}

// A topology of the shared folder by file name; nullptr where it is absent or unreadable (the
// caller skips, saying so).
inline std::shared_ptr<Topology> shared_topology(const std::string& file) {
  try {
    return std::make_shared<Topology>(load_topology_xml(STOKER_SHARED_DIR "/topologies/" + file));
  } catch (const std::exception&) {
    return nullptr;
  }
}

inline CpuSet numa_cpus(const Topology& topo, int os_index) {
  const NumaNode* n = topo.numa_by_os_index(os_index);
  return n ? n->cpus : CpuSet{};
}

// A rank of a 4-GPU node, as the plugin would fill it: rank `rank` of `size` sharing the
// whole node, GPU ids 0-3, 64 GiB for the node.
inline TaskFacts four_gpu_facts(const Topology& topo, int rank, int size) {
  TaskFacts w;
  w.kind = FactsKind::SlurmTask;
  w.topology = &topo;
  w.own_mask = topo.allowed_cpus;
  w.step = {topo.allowed_cpus, "the test"};
  w.gpu_ids = "0,1,2,3";
  w.memory = uint64_t{64} << 30;
  w.local_rank = rank;
  w.local_size = size;
  return w;
}

// Rule 11: rank `in.local_rank` planned alone (0 of 1) within the cores the node's plan gave it,
// as the runtime does inside a tuned task, gets the same cores, main and worker cores, workers.
inline void expect_same_alone(const PlanInput& in, const std::string& what) {
  const Plan p = make_plan(in);
  PlanInput alone = in;
  alone.local_rank = 0;
  alone.local_size = 1;
  alone.allowed = p.cpus;
  alone.local_gpus = {in.local_gpus.empty() ? -1 : in.local_gpus[in.local_rank]};
  const Plan q = make_plan(alone);
  SCOPED_TRACE(what + " size " + std::to_string(in.local_size) + " rank " +
               std::to_string(in.local_rank) + " mask " + in.allowed.to_string() + ": " +
               p.reason("cpus") + " | alone: " + q.reason("cpus"));
  EXPECT_EQ(q.cpus.to_string(), p.cpus.to_string());
  EXPECT_EQ(q.main_cpus.to_string(), p.main_cpus.to_string());
  EXPECT_EQ(q.worker_cpus.to_string(), p.worker_cpus.to_string());
  EXPECT_EQ(q.workers, p.workers);
}

}  // namespace stoker::test
