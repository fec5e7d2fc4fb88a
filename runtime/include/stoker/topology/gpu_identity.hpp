// Slurm-style GPU ids (CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS) -> topology GPUs.
// Never initialises CUDA or NVML: it reads /proc/driver/nvidia when present,
// else falls back to PCI bus order.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/topology/topology.hpp"

namespace stoker {

// minor number -> PCI bus id, read from <dir>/*/information ("Device Minor:" lines).
// Empty when the directory does not exist (no driver, tests).
std::map<int, std::string> read_nvidia_device_minors(
    const std::string& dir = "/proc/driver/nvidia/gpus");

struct GpuResolution {
  std::vector<int> gpus;  // indices into Topology::gpus, in the order of the id list
  std::string error;      // "" on success; else e.g. "cannot locate GPU GPU-8a1f...: ..."
                          // (the caller decides what follows: plan_input, plan_input.hpp)
  bool ok() const { return error.empty(); }
};

// Resolves a comma-separated id list ("0,1", "" -> no GPUs). UUID-style ids
// ("GPU-...", "MIG-...") and ids not on the node give an error, never a throw.
GpuResolution resolve_gpu_ids(const Topology& topo, std::string_view ids,
                              const std::map<int, std::string>& minors);

// PyTorch's LOCAL_RANK convention: the GPU of a rank that sees several.
// Returns -1 when `visible` is empty.
int gpu_for_local_rank(const std::vector<int>& visible, int local_rank);

}  // namespace stoker
