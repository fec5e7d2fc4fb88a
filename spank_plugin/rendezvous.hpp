// The rendezvous PyTorch launchers expect, from what Slurm tells a task: the first node of
// the step's node list and a port derived from the job id. No planning here (the step's
// CPUs, GPUs and memory are read in world.hpp); no spank.h either, so these are
// unit-tested without Slurm.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stoker::spank {

// The first host of a Slurm host list: "gpu[07-09,12],login1" -> "gpu07".
std::string first_host(std::string_view nodelist);

// The address rank 0 listens on: the step's first node when its name resolves,
// else (emulated nodes, which share this host) this host's name.
std::string master_address(std::string_view nodelist);

// A rendezvous port derived from the job id, in the unprivileged range 20000-39999,
// so that all ranks of a job agree without talking.
int master_port(uint32_t job_id);

}  // namespace stoker::spank
