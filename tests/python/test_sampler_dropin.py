"""stoker.DistributedSampler where torch's goes: a subclass of torch's class whose public
attributes mean what torch's do; picklable and deep-copyable; the arguments torch takes;
the paths PyTorch Lightning and Hugging Face Accelerate take through a sampler (written
down in docs/user-guide.md, "Coming from DistributedSampler"); the fingerprint of a Python
dataset."""
import copy
import pickle
import subprocess
import sys
import unittest

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader
from torch.utils.data.distributed import DistributedSampler as TorchSampler

import stoker


def walk(sampler, epoch):
    sampler.set_epoch(epoch)
    return list(sampler)


class IsTorchsClass(unittest.TestCase):
    def test_isinstance_and_torchs_attributes(self):
        for size, world, drop_last in ((101, 4, False), (101, 4, True), (8, 2, False)):
            for rank in range(world):
                ours = stoker.DistributedSampler(range(size), world, rank, seed=3,
                                                 drop_last=drop_last)
                theirs = TorchSampler(range(size), world, rank, seed=3, drop_last=drop_last)
                self.assertIsInstance(ours, TorchSampler)
                for name in ("num_replicas", "rank", "epoch", "num_samples", "total_size",
                             "shuffle", "seed", "drop_last"):
                    self.assertEqual(getattr(ours, name), getattr(theirs, name), name)
                self.assertEqual(len(ours), len(theirs))

    def test_import_stoker_does_not_import_torch(self):
        code = "import sys, stoker; assert 'torch' not in sys.modules; stoker.DistributedSampler; " \
               "assert 'torch' in sys.modules"
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

    def test_recreated_from_its_attributes(self):
        """What code that re-instantiates a sampler does: type(s)(s.dataset, ...attributes)."""
        s = stoker.DistributedSampler(range(50), 2, 1, shuffle=False, seed=4, drop_last=True)
        again = type(s)(s.dataset, num_replicas=s.num_replicas, rank=s.rank, shuffle=s.shuffle,
                        seed=s.seed, drop_last=s.drop_last)
        self.assertEqual(walk(again, 2), walk(s, 2))

    def test_a_changed_attribute_takes_effect_at_the_next_iteration(self):
        s = stoker.DistributedSampler(range(40), 2, 0, seed=1)
        s.epoch = 5  # as code that sets the attribute instead of calling set_epoch
        self.assertEqual(list(s), walk(stoker.DistributedSampler(range(40), 2, 0, seed=1), 5))
        s.shuffle = False
        self.assertEqual(list(s), list(range(0, 40, 2)))
        s.rank = 1
        self.assertEqual(list(s), list(range(1, 40, 2)))


class PickleAndCopy(unittest.TestCase):
    def test_pickle_and_deepcopy_carry_the_settings_and_the_epoch(self):
        s = stoker.DistributedSampler(np.arange(30), 3, 2, seed=8, drop_last=True)
        s.set_epoch(4)
        for twin in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s), copy.copy(s)):
            self.assertIsInstance(twin, stoker.DistributedSampler)
            self.assertEqual((twin.num_replicas, twin.rank, twin.seed, twin.epoch),
                             (3, 2, 8, 4))
            self.assertEqual(list(twin), list(s))

    def test_a_loaded_state_travels(self):
        s = stoker.DistributedSampler(range(40), 2, 0, seed=2)
        s.set_epoch(1)
        it = iter(s)
        first = [next(it) for _ in range(5)]
        state = s.state_dict(consumed=5)
        resumed = stoker.DistributedSampler(range(40), 2, 0, seed=2)
        resumed.load_state_dict(state)
        rest = list(pickle.loads(pickle.dumps(resumed)))
        self.assertEqual(first + rest, walk(stoker.DistributedSampler(range(40), 2, 0, seed=2), 1))


class ArgumentsTorchTakes(unittest.TestCase):
    def test_numpy_integers_truthy_flags_negative_seed_and_epoch(self):
        s = stoker.DistributedSampler(range(20), np.int64(2), np.int32(1), shuffle=1,
                                      seed=np.int64(-1), drop_last=0)
        self.assertEqual((s.num_replicas, s.rank, s.shuffle, s.drop_last, s.seed),
                         (2, 1, True, False, -1))
        same = stoker.DistributedSampler(range(20), 2, 1, seed=2**64 - 1)
        self.assertEqual(walk(s, 3), walk(same, 3), "seed -1 is 2**64 - 1, as torch's")
        s.set_epoch(-1)
        self.assertEqual(s.epoch, -1)
        self.assertEqual(sorted(list(s) + walk(stoker.DistributedSampler(range(20), 2, 0,
                                                                         seed=-1), -1)),
                         list(range(20)))
        self.assertEqual(s.state_dict(consumed=10)["epoch"], 2**64 - 1)

    def test_refusals_name_the_argument(self):
        cases = [({"num_replicas": "2", "rank": 0}, TypeError, "num_replicas must be an integer"),
                 ({"num_replicas": 2, "rank": 1.0}, TypeError, "rank must be an integer"),
                 ({"num_replicas": 0, "rank": 0}, ValueError, "num_replicas=0: must be at least 1"),
                 ({"num_replicas": 2, "rank": 0, "seed": 2**64}, ValueError, r"seed=\d+: must be"),
                 ({"num_replicas": 2, "rank": 0, "fingerprint": 1.5}, TypeError,
                  "fingerprint must be a str, bytes or int")]
        for kwargs, error, text in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaisesRegex(error, text):
                    stoker.DistributedSampler(range(10), **kwargs)
        with self.assertRaisesRegex(TypeError, "epoch must be an integer"):
            stoker.DistributedSampler(range(10), 2, 0).set_epoch(1.5)


class LibrariesPaths(unittest.TestCase):
    """The steps Lightning and Accelerate take through a DataLoader's sampler (their code
    is not installed here; the steps are theirs, docs/user-guide.md names the functions)."""

    def test_lightning_keeps_it_and_rebuilds_the_dataloader_around_it(self):
        dataset = torch.arange(24)
        sampler = stoker.DistributedSampler(dataset, 2, 1, seed=6)
        loader = DataLoader(dataset, batch_size=4, sampler=sampler)
        # _requires_distributed_sampler: replace only what is not a DistributedSampler
        self.assertIsInstance(loader.sampler, TorchSampler)
        # _update_dataloader: a new DataLoader from the old one's attributes, same sampler
        rebuilt = type(loader)(loader.dataset, batch_size=loader.batch_size,
                               sampler=loader.sampler, shuffle=False, batch_sampler=None)
        # _set_sampler_epoch: set_epoch on the sampler (and a batch sampler's sampler)
        for holder in (rebuilt, rebuilt.batch_sampler):
            getattr(holder, "sampler").set_epoch(3)
        batches = torch.cat(list(rebuilt)).tolist()
        self.assertEqual(batches, walk(stoker.DistributedSampler(dataset, 2, 1, seed=6), 3))

    def test_accelerate_sets_the_epoch_through_the_batch_sampler(self):
        dataset = torch.arange(24)
        sampler = stoker.DistributedSampler(dataset, 2, 0, seed=6)
        batches = BatchSampler(sampler, batch_size=5, drop_last=False)
        # DataLoaderShard.set_epoch: batch_sampler.sampler.set_epoch when it has one
        if hasattr(batches.sampler, "set_epoch"):
            batches.sampler.set_epoch(2)
        walked = sum(list(batches), [])
        self.assertEqual(walked, walk(stoker.DistributedSampler(dataset, 2, 0, seed=6), 2))


class Fingerprint(unittest.TestCase):
    def test_tensors_arrays_and_bytes_are_hashed(self):
        a = stoker.DistributedSampler([torch.ones(2) * i for i in range(9)], 1, 0)
        b = stoker.DistributedSampler([torch.ones(2) * i for i in range(8)] + [torch.zeros(2)],
                                      1, 0)
        c = stoker.DistributedSampler([(np.full(3, i), i) for i in range(9)], 1, 0)
        d = stoker.DistributedSampler([bytes([i]) * 4 for i in range(9)], 1, 0)
        for s in (a, b, c, d):
            self.assertRegex(s.fingerprint, r"^0x[0-9a-f]{16} \(len 9, items \[0, 4, 8\]\)$")
        self.assertNotEqual(a.fingerprint, b.fingerprint)
        self.assertNotEqual(a.state_dict()["sampler"], b.state_dict()["sampler"])

    def test_a_key_names_the_contents(self):
        one = stoker.DistributedSampler(range(9), 1, 0, fingerprint="train-v1")
        two = stoker.DistributedSampler(range(9), 1, 0, fingerprint="train-v2")
        self.assertIn("key 'train-v1'", one.fingerprint)
        with self.assertRaisesRegex(stoker.Error, "fingerprint"):
            two.load_state_dict(one.state_dict())

    def test_fingerprint_false_reads_no_item(self):
        class Unreadable(torch.utils.data.Dataset):
            def __len__(self):
                return 9

            def __getitem__(self, i):
                raise AssertionError("an item was read")

        s = stoker.DistributedSampler(Unreadable(), 1, 0, fingerprint=False)
        self.assertEqual(s.fingerprint, "not checked: fingerprint=False (no item read)")
        self.assertEqual(len(list(s)), 9)

    def test_plain_or_random_items_are_said_not_checked(self):
        plain = stoker.DistributedSampler(range(9), 1, 0)
        self.assertTrue(plain.fingerprint.startswith("not checked:"), plain.fingerprint)

        class Augmented(torch.utils.data.Dataset):
            def __len__(self):
                return 9

            def __getitem__(self, i):
                return torch.rand(3)

        before = torch.get_rng_state()
        random_items = stoker.DistributedSampler(Augmented(), 1, 0)
        self.assertIn("differs between two reads", random_items.fingerprint)
        self.assertTrue(torch.equal(torch.get_rng_state(), before), "the random stream moved")

    def test_the_agreement_says_not_checked_not_zero(self):
        views = [[0, 0, 2, 1, 0, 10, 0, 1, 0, 1, 0, 1], [1, 1, 2, 1, 0, 11, 0, 1, 0, 1, 0, 1]]
        with self.assertRaisesRegex(stoker.Error, r"dataset size 10 \(contents not checked\)"):
            stoker._stoker.check_epoch_views(views, seeds_must_match=True)


if __name__ == "__main__":
    unittest.main()
