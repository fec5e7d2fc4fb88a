"""stoker.DistributedSampler: a drop-in for torch's, with the C++ sampler's order, shards and
elastic resume. Exactly-once coverage over 1-4 ranks, equal lengths, the same global order on
every rank, resume 4 -> 3 and 2 -> 5 through a real DataLoader with 2 worker processes, and
iteration in O(1) memory."""
import os
import subprocess
import sys
import tracemalloc
import unittest
from collections import Counter

import torch
from torch.utils.data import DataLoader, Dataset

import stoker


class Indices(Dataset):
    """Sample i is i: what the loop sees is what the sampler chose."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def shards(n, world, **kw):
    kw.setdefault("agree", False)  # the ranks are simulated in one process
    return [stoker.DistributedSampler(Indices(n), num_replicas=world, rank=r, **kw)
            for r in range(world)]


def loop(sampler, batch_size, batches=None):
    """The indices a training loop sees through a DataLoader with 2 worker processes,
    stopping after `batches` batches (None: the whole pass)."""
    loader = DataLoader(Indices(len(sampler.dataset)), batch_size=batch_size, sampler=sampler,
                        num_workers=2)
    seen = []
    for k, batch in enumerate(loader):
        if batches is not None and k == batches:
            break
        seen += batch.tolist()
    return seen


class Coverage(unittest.TestCase):
    def test_exactly_once_over_one_to_four_ranks(self):
        for n in (1, 7, 100, 101, 1001):
            for world in (1, 2, 3, 4):
                for shuffle in (True, False):
                    with self.subTest(n=n, world=world, shuffle=shuffle):
                        parts = [list(s) for s in shards(n, world, shuffle=shuffle, seed=5)]
                        lengths = {len(p) for p in parts}
                        self.assertEqual(len(lengths), 1, "equal lengths on every rank")
                        count = Counter(i for p in parts for i in p)
                        self.assertEqual(set(count), set(range(n)))
                        # Padding (torch's rule) repeats only what the wrap needs.
                        self.assertEqual(sum(count.values()), -(-n // world) * world)
                        self.assertLessEqual(max(count.values()), -(-world // n) + 1)

    def test_drop_last_visits_each_kept_sample_once(self):
        for n, world in ((101, 4), (10, 3), (8, 4)):
            parts = [list(s) for s in shards(n, world, drop_last=True)]
            flat = [i for p in parts for i in p]
            self.assertEqual(len(flat), n // world * world)
            self.assertEqual(len(set(flat)), len(flat))

    def test_lengths_are_torchs(self):
        for n in (1, 7, 100, 101):
            for world in (1, 2, 3, 4):
                for drop_last in (False, True):
                    if drop_last and n < world:
                        continue
                    ours = stoker.DistributedSampler(Indices(n), world, 0, drop_last=drop_last,
                                                     agree=False)
                    theirs = torch.utils.data.DistributedSampler(Indices(n), world, 0,
                                                                 drop_last=drop_last)
                    self.assertEqual(len(ours), len(theirs), (n, world, drop_last))
                    self.assertEqual(ours.num_samples, theirs.num_samples)
                    self.assertEqual(ours.total_size, theirs.total_size)

    def test_without_shuffle_the_order_is_torchs(self):
        for n, world, drop_last in ((10, 3, False), (10, 3, True), (17, 4, False)):
            for rank in range(world):
                ours = stoker.DistributedSampler(Indices(n), world, rank, shuffle=False,
                                                 drop_last=drop_last, agree=False)
                theirs = torch.utils.data.DistributedSampler(Indices(n), world, rank,
                                                             shuffle=False, drop_last=drop_last)
                self.assertEqual(list(ours), list(theirs))


class Order(unittest.TestCase):
    def global_order(self, n, world, seed, epoch):
        """The epoch's order as the ranks together walk it: rank r takes positions r, r+W, ..."""
        parts = shards(n, world, seed=seed)
        for s in parts:
            s.set_epoch(epoch)
        walked = [list(s) for s in parts]
        return [walked[p % world][p // world] for p in range(n)]

    def test_every_rank_walks_the_same_order_for_a_seed_and_epoch(self):
        n = 96  # a multiple of every world size: no padding
        alone = self.global_order(n, 1, seed=3, epoch=2)
        self.assertEqual(sorted(alone), list(range(n)))
        for world in (2, 3, 4):
            self.assertEqual(self.global_order(n, world, seed=3, epoch=2), alone, world)
        self.assertNotEqual(self.global_order(n, 2, seed=3, epoch=3), alone, "a new epoch")
        self.assertNotEqual(self.global_order(n, 2, seed=4, epoch=2), alone, "a new seed")

    def test_iterating_twice_without_set_epoch_repeats_the_epoch(self):
        s = stoker.DistributedSampler(Indices(50), 2, 1, seed=9, agree=False)
        s.set_epoch(4)
        self.assertEqual(list(s), list(s))


class ElasticResume(unittest.TestCase):
    def resume(self, n, before, after, batch_size, batches, epoch=2):
        first = shards(n, before, seed=7)
        seen = []
        states = set()
        for s in first:
            s.set_epoch(epoch)
            seen += loop(s, batch_size, batches)
            states.add(s.state_dict(consumed=batches * batch_size)["sampler"])
        self.assertEqual(len(states), 1, "every rank writes the same state")
        state = {"sampler": states.pop()}
        rest = []
        for s in shards(n, after, seed=7):
            s.load_state_dict(state)
            s.set_epoch(epoch)  # the usual loop's call keeps the loaded state
            self.assertEqual(len(s), -(-(n - before * batches * batch_size) // after))
            rest += loop(s, batch_size)
        return seen, rest

    def test_four_ranks_then_three_see_the_rest_of_the_epoch_exactly_once(self):
        seen, rest = self.resume(960, 4, 3, batch_size=10, batches=6)
        self.assertEqual(len(seen), 240)
        self.assertEqual(sorted(seen + rest), list(range(960)))

    def test_two_ranks_then_five_see_the_rest_of_the_epoch_exactly_once(self):
        seen, rest = self.resume(960, 2, 5, batch_size=8, batches=5)
        self.assertEqual(len(seen), 80)
        self.assertEqual(sorted(seen + rest), list(range(960)))

    def test_a_resume_with_a_wrapped_tail_repeats_only_the_padding(self):
        seen, rest = self.resume(1000, 4, 3, batch_size=10, batches=5)  # 800 left for 3 ranks
        count = Counter(seen + rest)
        self.assertEqual(set(count), set(range(1000)))
        self.assertEqual(sum(count.values()), 200 + 267 * 3)  # one repeat pads the tail

    def test_the_next_epoch_after_a_resume_is_whole(self):
        s = shards(100, 2, seed=1)[0]
        s.set_epoch(0)
        s.load_state_dict(shards(100, 4, seed=1)[1].state_dict())
        s.set_epoch(1)  # another epoch: the loaded state is dropped
        self.assertEqual(len(s), 50)
        self.assertEqual(len(list(s)), 50)

    def test_a_finished_pass_counts_the_short_last_batch(self):
        s = shards(10, 2)[0]
        loop(s, batch_size=4)  # batches of 4 and 1: 2 x 4 > 5 indices
        self.assertEqual(s.state_dict(consumed=2 * 4)["consumed"], 10)


class FaultsSampler(unittest.TestCase):
    def test_a_count_the_sampler_cannot_have_handed_out_is_refused(self):
        s = shards(1000, 4)[0]
        it = iter(s)
        for _ in range(10):
            next(it)
        with self.assertRaisesRegex(ValueError, "only 10 indices were handed out"):
            s.state_dict(consumed=40)  # all ranks' count, not this rank's
        with self.assertRaisesRegex(ValueError, "pass consumed=batches_done"):
            s.state_dict()  # a DataLoader reads ahead: the sampler cannot tell
        self.assertEqual(s.state_dict(consumed=8)["consumed"], 32)

    def test_a_state_of_another_dataset_or_seed_is_refused(self):
        state = shards(100, 2, seed=1)[0].state_dict()
        with self.assertRaisesRegex(stoker.Error, "a dataset of 100 samples; this .* 99"):
            shards(99, 2, seed=1)[0].load_state_dict(state)
        with self.assertRaisesRegex(stoker.Error, "seed"):
            shards(100, 2, seed=2)[0].load_state_dict(state)
        with self.assertRaises(TypeError):
            shards(100, 2)[0].load_state_dict("stoker-sampler v1")
        with self.assertRaises(ValueError):
            shards(100, 2)[0].load_state_dict({"sampler": "garbage"})

    def test_bad_arguments_name_themselves(self):
        with self.assertRaisesRegex(ValueError, r"Invalid rank 2, rank should be in the interval"):
            stoker.DistributedSampler(Indices(10), num_replicas=2, rank=2)
        with self.assertRaisesRegex(ValueError, "num_replicas=0"):
            stoker.DistributedSampler(Indices(10), num_replicas=0, rank=0)
        with self.assertRaisesRegex(ValueError, "empty"):
            stoker.DistributedSampler(Indices(0), num_replicas=1, rank=0)
        # torch's seeds are -2**63 .. 2**64 - 1 (negatives wrap); shuffle is any truthy value
        with self.assertRaisesRegex(ValueError, "seed=-9223372036854775809"):
            stoker.DistributedSampler(Indices(10), 1, 0, seed=-2**63 - 1)
        self.assertTrue(stoker.DistributedSampler(Indices(10), 1, 0, shuffle="yes").shuffle)
        with self.assertRaisesRegex(TypeError, "seed must be an integer"):
            stoker.DistributedSampler(Indices(10), 1, 0, seed="0")


class Footprint(unittest.TestCase):
    def test_iteration_holds_no_list_of_the_indices(self):
        # 10^12 samples: a list of them could not exist; building and walking must be O(1).
        s = stoker.DistributedSampler(Indices(10**12), num_replicas=4, rank=3, agree=False)
        self.assertEqual(len(s), 250_000_000_000)
        tracemalloc.start()
        it = iter(s)
        drawn = [next(it) for _ in range(5000)]
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        self.assertEqual(len(set(drawn)), 5000)
        self.assertLess(peak, 2 << 20, "bytes allocated while iterating")


class WithTheDataLoaderAndThePlan(unittest.TestCase):
    def test_the_plans_dataloader_settings_take_it(self):
        s = stoker.DistributedSampler(Indices(64), 2, 0, seed=1, agree=False)
        kwargs = stoker.plan().torch_dataloader_kwargs()
        loader = DataLoader(Indices(64), batch_size=8, sampler=s, **kwargs)
        self.assertEqual(len(loader), 4)
        self.assertEqual(sorted(i for b in loader for i in b.tolist()), sorted(s))

    def test_defaults_come_from_the_environment(self):
        code = ("import stoker; s = stoker.DistributedSampler(range(30)); "
                "print(s.num_replicas, s.rank, s.seed, len(s))")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("SLURM_", "OMPI_", "PMIX_", "PMI_"))}
        env.update(RANK="1", WORLD_SIZE="3", STOKER_SEED="5")
        out = subprocess.run([sys.executable, "-c", code], env=env, text=True, check=True,
                             stdout=subprocess.PIPE).stdout
        self.assertEqual(out.split(), ["3", "1", "5", "10"])


if __name__ == "__main__":
    unittest.main()
