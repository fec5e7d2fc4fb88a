"""This process's place among the ranks, as torch finds it: the one detection that
stoker.DistributedSampler and stoker.Loader use when num_replicas/rank (world_size/rank) are
left at None.

  1. an initialised torch.distributed process group (what torch's DistributedSampler reads):
     under mp.spawn + tcp://, PyTorch's test harness (WORLD_SIZE set, the rank passed to
     init_process_group) or any launcher, the group is the world;
  2. else what the C++ side detects (stoker/distributed/world.hpp): the launcher's variables
     (OMPI_*, RANK/WORLD_SIZE, SLURM_*) and MPI under an MPI launcher;
  3. else one process.

When the group and the launcher's variables disagree, the group wins and stderr says so
(once per process for each disagreement); with STOKER_VERBOSE=1 one line says where the
world came from. Never imports torch: a group exists only if the caller imported it.
"""
import os
import sys
from collections import namedtuple

from . import _stoker
from . import _notes

__all__ = ["World", "find_world", "torch_group"]

_SAID = set()  # the stderr lines said so far (each once per process)


# rank, world_size, and where the pair came from (e.g. "torch.distributed (gloo) process
# group"). A collections.namedtuple, not typing.NamedTuple: typing alone is 3 ms of
# `import stoker`.
World = namedtuple("World", ["rank", "world_size", "source"])


def torch_group():
    """torch.distributed when this process initialised it, else None (never imports torch)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def group_world(dist):
    return World(dist.get_rank(), dist.get_world_size(),
                 f"torch.distributed ({dist.get_backend()}) process group")


def _environment_says(group):
    """What the launcher's variables say, when they say something the group contradicts."""
    try:
        env = _stoker.launch_world()
    except _stoker.Error as e:
        if "WORLD_SIZE is set" in str(e):  # PyTorch's harness: the rank went to the group
            return None
        return f"something unreadable ({e})"
    if env["source"].startswith("single process"):
        return None
    if (env["rank"], env["world_size"]) == (group.rank, group.world_size):
        return None
    return f"rank {env['rank']} of {env['world_size']} ({env['source']})"


def _say_once(line):
    if line not in _SAID:
        _SAID.add(line)
        _notes.note(line)


def find_world(who, world_size=None, rank=None):
    """The World for `who` ("DistributedSampler", "Loader"): the given values where not None,
    the rest detected. The caller checks the values it was given."""
    dist = torch_group()
    if dist is not None:
        found = group_world(dist)
        contradiction = _environment_says(found)
        if contradiction is not None:
            _say_once(f"stoker: rank {found.rank}: {who}: torch.distributed's process group "
                      f"says rank {found.rank} of {found.world_size}, the environment says "
                      f"{contradiction}: the process group wins")
    else:
        detected = _stoker.world()
        found = World(detected["rank"], detected["world_size"], detected["source"])
    if world_size is not None or rank is not None:
        given = "num_replicas and rank" if who == "DistributedSampler" else "world_size and rank"
        source = (f"the arguments ({given})" if world_size is not None and rank is not None
                  else f"the arguments and {found.source}")
        found = World(found.rank if rank is None else rank,
                      found.world_size if world_size is None else world_size, source)
    if os.environ.get(_stoker.VERBOSE_VAR) == "1":
        _say_once(f"stoker: rank {found.rank}: {who}: rank {found.rank} of {found.world_size} "
                  f"from {found.source}")
    return found
