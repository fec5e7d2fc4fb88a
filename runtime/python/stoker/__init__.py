"""stoker: input pipelines sized and placed for the CPUs, GPU and memory Slurm granted.

Two ways in for PyTorch:

    # 1. keep your Dataset, take the settings from the plan
    loader = torch.utils.data.DataLoader(ds, batch_size=64,
                                         **stoker.plan().torch_dataloader_kwargs())

    # ... or with stoker's sampler: the same DataLoader, plus exact elastic resume
    sampler = stoker.DistributedSampler(ds, seed=0)
    loader = torch.utils.data.DataLoader(ds, batch_size=64, sampler=sampler,
                                         **stoker.plan().torch_dataloader_kwargs())

    # 2. use stoker's C++ loader (threads, recycled slots, zero-copy tensors)
    loader = stoker.Loader.images("/data/train", batch_size=64, size=224)
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        for images, labels in loader:
            ...
"""
import os as _os


def _refuse_an_old_extension():
    """An older stoker's compiled extension (_stoker.cpython-3XY-...so) left beside the .py
    files would stand in for _stoker.py (Python prefers an extension of the same name) and
    run the old binding against the new package: say so, naming it."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    old = sorted(n for n in _os.listdir(here) if n.startswith("_stoker") and n.endswith(".so"))
    if old:
        raise ImportError(f"stoker: {', '.join(old)} in {here} is an older stoker's compiled "
                          "extension, which would stand in for this one's Python layer: remove "
                          "it (pip uninstall stoker, then install again; or delete the file)")


_refuse_an_old_extension()
from . import _stoker  # noqa: E402 (the C library through ctypes: a missing library is one line)
from . import transforms  # noqa: E402 (the augmentations one by one; imports no numpy)
from ._choices import crop_box, flipped, split_cpus
from ._loader import Loader
from ._plan import Plan, plan
from ._workers import WorkerInit

Error = _stoker.Error  # a RuntimeError: a failed sample, disagreeing ranks, a bad dataset
built_with_cuda = _stoker.built_with_cuda
built_with_mpi = _stoker.built_with_mpi

__version__ = "0.1.0"


def __getattr__(name):
    """stoker.DistributedSampler subclasses torch's: it is made on first use, so that
    `import stoker` does not import torch (stoker.plan() reads torch's thread count as the
    user left it)."""
    if name == "DistributedSampler":
        from ._sampler import DistributedSampler

        return DistributedSampler
    raise AttributeError(f"module 'stoker' has no attribute {name!r}")
__all__ = ["DistributedSampler", "Error", "Loader", "Plan", "WorkerInit", "plan", "crop_box",
           "flipped", "split_cpus", "transforms", "built_with_cuda", "built_with_mpi"]
