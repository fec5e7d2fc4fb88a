// The launch environment: what launchers (Slurm, torchrun, mpirun) and users tell a process
// in environment variables, read one way everywhere. One reader family with one set of
// bounds and one message for a bad value, and one detector of this process's place among
// the ranks. The only getenv of the runtime is process_env()'s: every other reader takes an
// EnvGetter or calls process_env(). MPI-free: distributed/ layers MPI itself on top
// (detect_world), and the plugin reads a task's environment through the same EnvGetter.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "stoker/common/cpuset.hpp"

namespace stoker {

// Reads one variable of an environment; nullopt when unset.
using EnvGetter = std::function<std::optional<std::string>(const std::string&)>;

// This process's environment (getenv, read at each call).
EnvGetter process_env();
// A fixed set of variables: tests, Python's os.environ snapshot.
EnvGetter env_from(std::map<std::string, std::string> vars);

// The value of `name` when it is set and not empty; nullopt otherwise (an empty value reads
// as unset: STOKER_METRICS=, HOME=).
std::optional<std::string> env_nonempty(const EnvGetter& env, const std::string& name);

// The one error for a variable whose value is not allowed, naming the variable, its value,
// what is allowed and what to do:
//   "NAME: garbled value 'VALUE' (expected ALLOWED; fix or unset NAME)"
[[noreturn]] void throw_garbled_env(const std::string& name, const std::string& value,
                                    const std::string& allowed);

// The most ranks a job may have, and on one node: the bounds of every rank and size read
// from the environment.
inline constexpr uint64_t kMaxRanks = uint64_t{1} << 24;
inline constexpr uint64_t kMaxLocalRanks = uint64_t{1} << 16;

// A whole number from lo to hi; nullopt when unset; stoker::Error (throw_garbled_env) when
// garbled or out of bounds. An empty value is garbled, not unset.
std::optional<uint64_t> env_whole(const EnvGetter& env, const std::string& name, uint64_t lo,
                                  uint64_t hi);
// An OS CPU list ("0-5,12"); nullopt when unset; stoker::Error when garbled.
std::optional<CpuSet> env_cpus(const EnvGetter& env, const std::string& name);

// Slurm's compressed task counts per node ("2(x3),1": 2 tasks on each of 3 nodes, then 1):
// the tasks on node `node` (0-based, SLURM_NODEID); 0 past its end. stoker::Error naming
// `name` when the list is malformed.
uint64_t slurm_tasks_on_node(const std::string& name, const std::string& list, uint64_t node);

// A process's place among the ranks of a job: rank of world_size, and local_rank of
// local_size on its node. The one shape of it: launch_ranks returns it, the distributed World
// (detect_world) and the plugin's StepTask extend it.
struct Ranks {
  uint64_t rank = 0, world_size = 1;
  uint64_t local_rank = 0, local_size = 1;
  std::string source;  // where each pair came from, e.g. "RANK/WORLD_SIZE, LOCAL_RANK/..."
};

// This process's place as the launcher's variables say, one precedence for every reader (the
// planner, the sampler's world, metrics labels, the example trainer). Each pair (rank, world
// size) and (local rank, local size) comes from the first launcher that sets it:
//  1. Open MPI's mpirun: OMPI_COMM_WORLD_RANK/_SIZE, OMPI_COMM_WORLD_LOCAL_RANK/_LOCAL_SIZE;
//  2. torchrun: RANK/WORLD_SIZE, LOCAL_RANK/LOCAL_WORLD_SIZE;
//  3. Slurm: SLURM_PROCID/SLURM_NTASKS (SLURM_NTASKS unset: 1), SLURM_LOCALID and the
//     tasks on this node from SLURM_STEP_TASKS_PER_NODE (else SLURM_TASKS_PER_NODE) at
//     SLURM_NODEID;
//  4. else rank 0 of 1.
// Explicit values (a request, `stoker plan --local-rank`) and MPI itself (detect_world)
// come before all of these; their callers layer them on top.
// Throws stoker::Error naming the variable when one is garbled, when only one of a pair is
// set ("set both, or neither"), or when a rank is not below its size.
Ranks launch_ranks(const EnvGetter& env);

}  // namespace stoker
