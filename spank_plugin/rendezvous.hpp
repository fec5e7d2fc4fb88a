// The rendezvous PyTorch launchers expect, from what Slurm tells a task: the address of the
// step's first node and a port derived from the job and the step. No planning here (the
// step's CPUs, GPUs and memory are read in task_facts.hpp); no spank.h either, so these are
// unit-tested without Slurm (the NodeAddr lookup is passed in).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace stoker::spank {

// The first host of a Slurm host list: "gpu[07-09,12],login1" -> "gpu07".
std::string first_host(std::string_view nodelist);

// A node's address as Slurm knows it (slurm.conf's NodeAddr); nullopt when it cannot say.
using NodeAddrLookup = std::function<std::optional<std::string>(const std::string& node)>;

// The address rank 0 listens on: the step's first node's NodeAddr, else that node's name;
// "" when the node list is empty. Why never this host's name or a resolver's answer: every
// node computes this on its own, and the ranks only meet when all of them got the same
// string; a name that resolves on one node and not on another, or a per-node fallback,
// splits the step.
std::string master_address(std::string_view nodelist, const NodeAddrLookup& node_addr);

// The rendezvous ports: 20000-32767, unprivileged and below Linux's default ephemeral range
// (32768-60999), where an outgoing connection of any process may already hold a port.
inline constexpr int kPortBase = 20000;
inline constexpr int kStepSlots = 32;   // steps of one job with ports of their own
inline constexpr int kJobGroups = 399;  // kPortBase + kJobGroups * kStepSlots = 32768
// A port from the job id and the step id, so that all ranks of a step agree without
// talking, and concurrent steps of one job do not collide: normal steps whose ids differ by
// less than kStepSlots - 3 (29) get different ports, and the batch, interactive and extern
// steps have slots of their own; consecutive jobs differ by kStepSlots.
int master_port(uint32_t job_id, uint32_t step_id);

}  // namespace stoker::spank
