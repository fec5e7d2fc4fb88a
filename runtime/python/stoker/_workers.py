"""The worker_init_fn that torch_dataloader_kwargs() hands to torch's DataLoader."""
import os
import warnings

__all__ = ["WorkerInit"]


class WorkerInit:
    """Pins DataLoader worker i to its share of the plan's worker CPUs and seeds `random`
    and numpy from torch's per-worker seed, then calls the user's own worker_init_fn.

    A top-level class holding plain lists, so it pickles: it works with the fork, spawn
    and forkserver start methods alike.
    """

    def __init__(self, shares, user_fn=None):
        self.shares = [sorted(int(c) for c in share) for share in shares]
        self.user_fn = user_fn

    def __call__(self, worker_id):
        import random  # here: `import stoker` need not pay for it

        import torch  # only ever called inside a torch DataLoader worker

        seed = torch.initial_seed()  # base_seed + worker_id: differs per worker and epoch
        random.seed(seed)
        try:
            import numpy
        except ImportError:
            numpy = None
        if numpy is not None:
            numpy.random.seed(seed % 2**32)
        if self.shares:
            cpus = self.shares[worker_id % len(self.shares)]
            if cpus:
                try:
                    os.sched_setaffinity(0, cpus)
                except OSError as e:
                    # The CPUs are outside this job's cpuset (a plan for another machine or
                    # a changed binding): run unpinned rather than fail the worker.
                    warnings.warn(f"stoker: could not pin DataLoader worker {worker_id} to "
                                  f"CPUs {cpus}: {e}; it runs unpinned", RuntimeWarning)
        if self.user_fn is not None:
            self.user_fn(worker_id)

    def __repr__(self):
        return f"stoker.WorkerInit(shares={self.shares!r})"
