// Planner cost: one rank's plan on the 192-PU, 24-NUMA-node shared topology (goal:
// < 1 ms per plan), with the XML load measured separately, plus a GPU node (the
// generated DGX-A100-like fixture) where the GPU-NUMA assignment does the most work.
#include <benchmark/benchmark.h>

#include "stoker/common/error.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/topology/topology.hpp"
#include "topology_fixtures.hpp"

namespace {

const std::string kXml = STOKER_SHARED_DIR "/topologies/192em64t-24n8c2t.xml";

stoker::PlanInput input(const stoker::Topology& topo, int rank, int size) {
  stoker::PlanInput in;
  in.topology = &topo;
  in.allowed = topo.allowed_cpus;
  in.local_rank = rank;
  in.local_size = size;
  in.mem_limit = uint64_t{64} << 30;
  in.profile = stoker::builtin_profiles().get("balanced");
  return in;
}

void BM_LoadTopologyXml_192em64t(benchmark::State& state) {
  for (auto _ : state) {
    try {
      benchmark::DoNotOptimize(stoker::load_topology_xml(kXml));
    } catch (const stoker::Error& e) {
      state.SkipWithError(e.what());
      break;
    }
  }
}
BENCHMARK(BM_LoadTopologyXml_192em64t)->Unit(benchmark::kMillisecond);

// Arg: local ranks on the node; the last rank is planned (the whole node-wide split runs).
void BM_PlanOneRank_192em64t(benchmark::State& state) {
  stoker::Topology topo;
  try {
    topo = stoker::load_topology_xml(kXml);
  } catch (const stoker::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const int size = static_cast<int>(state.range(0));
  stoker::PlanInput in = input(topo, size - 1, size);
  for (auto _ : state) benchmark::DoNotOptimize(stoker::make_plan(in));
  state.SetLabel(std::to_string(topo.allowed_cpus.count()) + " PUs, " +
                 std::to_string(topo.numa_nodes.size()) + " NUMA nodes");
}
BENCHMARK(BM_PlanOneRank_192em64t)->Arg(1)->Arg(8)->Arg(24)->Unit(benchmark::kMicrosecond);

void BM_PlanOneRank_DgxA100Like(benchmark::State& state) {
  stoker::Topology topo = stoker::load_topology_xml_text(stoker::test::dgx_a100_like(), "dgx");
  stoker::PlanInput in = input(topo, 7, 8);
  for (int r = 0; r < 8; ++r) in.local_gpus.push_back(r);
  for (auto _ : state) benchmark::DoNotOptimize(stoker::make_plan(in));
  state.SetLabel("256 PUs, 8 GPUs, 8 ranks");
}
BENCHMARK(BM_PlanOneRank_DgxA100Like)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
