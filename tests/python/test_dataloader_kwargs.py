"""The zero-code-change path: a user's own Dataset in torch's DataLoader with
stoker.plan().torch_dataloader_kwargs(). The workers really run on the plan's worker CPUs
(os.sched_getaffinity inside them) and get distinct numpy/random seeds."""
import os
import random
import unittest

import numpy as np
import torch
import torch.utils.data as tud

import stoker
from test_plan import env_plan


class ProbeDataset(tud.Dataset):
    """Each sample reports where and how it was made."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        info = tud.get_worker_info()
        return {
            "worker": -1 if info is None else info.id,
            "cpus": sorted(os.sched_getaffinity(0)),
            "numpy": int(np.random.randint(0, 2**31 - 1)),
            "random": random.random(),
            "pid": os.getpid(),
        }


def collect(loader):
    seen = []
    for batch in loader:
        for k in range(len(batch["worker"])):
            seen.append({key: (value[k].tolist() if torch.is_tensor(value[k]) else value[k])
                         for key, value in batch.items()
                         if key != "cpus"} | {"cpus": [int(c[k]) for c in batch["cpus"]]})
    return seen


@unittest.skipUnless({0, 1} <= os.sched_getaffinity(0), "needs CPUs 0 and 1 in this mask")
class PinnedWorkers(unittest.TestCase):
    def run_loader(self, context=None, **env):
        p = stoker.plan(environ=env_plan(**env))
        kwargs = p.torch_dataloader_kwargs()
        loader = tud.DataLoader(ProbeDataset(), batch_size=2, multiprocessing_context=context,
                                **kwargs)
        first, second = collect(loader), collect(loader)  # two epochs, persistent workers
        return p, first, second

    def test_one_worker_on_cpu_1(self):
        p, first, second = self.run_loader(STOKER_WORKERS="1", STOKER_WORKER_CPUS="1",
                                           STOKER_MAIN_CPUS="0", STOKER_PREFETCH="2")
        self.assertEqual(len(first), 16)
        for sample in first + second:
            self.assertEqual(sample["worker"], 0)
            self.assertEqual(sample["cpus"], [1])
        self.assertNotIn(os.getpid(), {s["pid"] for s in first})
        # persistent_workers: the same process serves both epochs.
        self.assertEqual({s["pid"] for s in first}, {s["pid"] for s in second})

    def test_two_workers_get_one_cpu_each(self):
        p, first, _ = self.run_loader(STOKER_WORKERS="2", STOKER_WORKER_CPUS="0-1",
                                      STOKER_PREFETCH="4")
        by_worker = {}
        for sample in first:
            by_worker.setdefault(sample["worker"], set()).add(tuple(sample["cpus"]))
        self.assertEqual(by_worker, {0: {(0,)}, 1: {(1,)}})
        # numpy and random are seeded per worker: their first draws differ.
        firsts = {}
        for sample in first:
            firsts.setdefault(sample["worker"], (sample["numpy"], sample["random"]))
        self.assertNotEqual(firsts[0][0], firsts[1][0])
        self.assertNotEqual(firsts[0][1], firsts[1][1])

    def test_spawn_start_method(self):
        # worker_init_fn is pickled into spawned workers: it must be a top-level object.
        _, first, _ = self.run_loader(context="spawn", STOKER_WORKERS="1",
                                      STOKER_WORKER_CPUS="1", STOKER_PREFETCH="2")
        self.assertEqual({tuple(s["cpus"]) for s in first}, {(1,)})

    def test_user_worker_init_fn_still_runs(self):
        p = stoker.plan(environ=env_plan(STOKER_WORKERS="1", STOKER_WORKER_CPUS="1"))
        kwargs = p.torch_dataloader_kwargs(worker_init_fn=_mark_worker)
        loader = tud.DataLoader(MarkDataset(), batch_size=4, **kwargs)
        self.assertEqual(next(iter(loader)).tolist(), [1, 1, 1, 1])


def _mark_worker(worker_id):
    os.environ["STOKER_TEST_MARK"] = "1"


class MarkDataset(tud.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return int(os.environ.get("STOKER_TEST_MARK", "0"))


if __name__ == "__main__":
    unittest.main()
