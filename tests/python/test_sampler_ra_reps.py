"""Repeated augmentation (ra_reps), as torchvision's references/classification/sampler.py
RASampler (0.14) does it, in stoker.DistributedSampler and stoker.Loader:

- with shuffle off, each rank's indices equal RASampler(shuffle=False)'s, for several
  dataset sizes, world sizes and repetitions. The class is imported from torchvision's
  source tree when one is here (Debian's `apt-get source pytorch-vision`, found through
  STOKER_TORCHVISION_SOURCE or under /tmp and /usr/src); its formula, restated below, is
  compared always, so the test means the same without the tree;
- a dataset of fewer than 256 samples (RASampler's empty epoch) is a stoker.Error naming
  ra_reps and the size; a state saved with another ra_reps is refused by name;
- the copies of an image get different crops, flips and policy draws, copy 0 the draws of
  the same sample without repetition, and a second run and a resumed epoch repeat them.
"""
import glob
import importlib.util
import os
import pickle
import unittest

import numpy as np

import stoker
from testdata import ImageFolderCase


def _reference_class():
    """RASampler from a torchvision source tree, or None."""
    roots = [os.environ.get("STOKER_TORCHVISION_SOURCE", ""), "/tmp/*", "/usr/src"]
    for root in filter(None, roots):
        pattern = os.path.join(root, "*vision-0.14*", "references", "classification",
                               "sampler.py")
        for path in sorted(glob.glob(pattern)):
            spec = importlib.util.spec_from_file_location("_ra_sampler", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module.RASampler
    return None


RASampler = _reference_class()


def restated(size, world, rank, reps):
    """RASampler(shuffle=False)'s indices for `rank`, from its __iter__ line by line."""
    indices = [i for i in range(size) for _ in range(reps)]
    num_samples = -(-size * reps // world)
    total = num_samples * world
    indices += indices[:total - len(indices)]
    return indices[rank:total:world][:size // 256 * 256 // world]


def sampler(size, world, rank, reps, **kw):
    return stoker.DistributedSampler(range(size), num_replicas=world, rank=rank, ra_reps=reps,
                                     agree=False, **kw)


class RaSampler(unittest.TestCase):
    def test_unshuffled_indices_equal_rasamplers(self):
        if RASampler is None:
            print("RASampler's source is not here: compared with its restated formula only")
        for size in (256, 300, 511, 1000, 1031):
            for world in (1, 2, 3, 4, 8):
                for reps in (2, 3, 4):
                    for rank in range(world):
                        with self.subTest(size=size, world=world, reps=reps, rank=rank):
                            ours = sampler(size, world, rank, reps, shuffle=False)
                            want = restated(size, world, rank, reps)
                            if RASampler is not None:
                                ref = RASampler(range(size), num_replicas=world, rank=rank,
                                                shuffle=False, repetitions=reps)
                                self.assertEqual(list(ref), want)
                                self.assertEqual(len(ref), len(ours))
                            self.assertEqual(list(ours), want)
                            self.assertEqual(len(ours), len(want))

    def test_the_shuffled_order_repeats_each_index_in_a_row_across_ranks(self):
        size, world, reps = 1000, 4, 4
        shards = []
        for rank in range(world):
            s = sampler(size, world, rank, reps, seed=5)
            s.set_epoch(3)
            shards.append(list(s))
        order = [shards[p % world][p // world] for p in range(768)]  # dealt round robin
        for p in range(0, 768, reps):
            self.assertEqual(order[p:p + reps], [order[p]] * reps)
        self.assertEqual(len(set(order)), 768 // reps)
        self.assertNotEqual(order[::reps], sorted(order[::reps]))

    def test_too_few_samples_is_an_error_not_an_empty_epoch(self):
        if RASampler is not None:
            self.assertEqual(list(RASampler(range(255), num_replicas=1, rank=0, repetitions=4)),
                             [])
        with self.assertRaisesRegex(stoker.Error, r"ra_reps 4 over a dataset of 255 samples"):
            sampler(255, 1, 0, 4)
        with self.assertRaisesRegex(ValueError, r"ra_reps"):
            sampler(1000, 1, 0, 0)

    def test_a_state_resumes_the_repeated_order_and_names_another_ra_reps(self):
        whole = sampler(1000, 2, 1, 3, seed=9)
        whole.set_epoch(2)
        indices = list(whole)
        state = whole.state_dict(consumed=100)
        resumed = sampler(1000, 2, 1, 3, seed=9)
        resumed.load_state_dict(state)
        resumed.set_epoch(2)
        copy = pickle.loads(pickle.dumps(resumed))  # the settings and the loaded state travel
        self.assertEqual(list(resumed), indices[100:])
        self.assertEqual((copy.ra_reps, list(copy)), (3, indices[100:]))
        plain = sampler(1000, 2, 1, 1, seed=9)
        with self.assertRaisesRegex(stoker.Error, "written with ra_reps 3; this sampler has "
                                    "ra_reps 1"):
            plain.load_state_dict(state)
        self.assertIn("ra_reps=3", repr(resumed))

    def test_a_resume_on_another_number_of_ranks_deals_the_rest_to_that_worlds_end(self):
        # 2 ranks read 100 each, then 3 ranks the rest, to RASampler's end on 3 ranks (768,
        # less the uneven tail: 567 = 3 x 189 of the 568 positions left)
        size, reps = 1000, 3
        one = sampler(size, 1, 0, reps, seed=9)  # the epoch's repeated order, position by position
        one.set_epoch(2)
        order = list(one)
        read = {}
        before = [sampler(size, 2, r, reps, seed=9) for r in range(2)]
        for r, s in enumerate(before):
            s.set_epoch(2)
            read.update({2 * i + r: index for i, index in enumerate(list(s)[:100])})
        state = before[0].state_dict(consumed=100)
        for r in range(3):
            s = sampler(size, 3, r, reps, seed=9)
            s.load_state_dict(state)
            rest = list(s)
            self.assertEqual(len(rest), 189)
            read.update({200 + 3 * i + r: index for i, index in enumerate(rest)})
        self.assertEqual(sorted(read), list(range(767)))
        self.assertEqual([read[p] for p in range(767)], order[:767])


class RepeatedAugmentation(ImageFolderCase, unittest.TestCase):
    FOLDER = {"classes": 4, "per_class": 64}  # 256 images: one RASampler epoch of 256 samples
    OPTIONS = {"auto_augment_policy": "ta_wide", "random_erase_prob": 0.3}

    def loader(self, **kw):
        # 64 px: TrivialAugmentWide translates by up to 32 px, which at 16 px moved some
        # copies wholly out of the frame, two of them then equally blank
        return stoker.Loader.images(self.root, batch_size=32, size=64, seed=4, world_size=1,
                                    rank=0, train=True, dtype="uint8", layout="HWC",
                                    return_indices=True, **{**self.OPTIONS, **kw})

    @staticmethod
    def samples(batches, out):
        for data, _, indices in batches:
            out += [(i, np.array(data[k].numpy())) for k, i in enumerate(indices.tolist())]
        return out

    def epoch(self, **kw):
        loader = self.loader(**kw)
        loader.set_epoch(1)
        out = self.samples(loader, [])
        loader.close()
        return out

    def test_the_copies_differ_and_copy_zero_is_the_sample_without_repetition(self):
        repeated = self.epoch(ra_reps=4)
        self.assertEqual(len(repeated), 256)
        plain = dict(self.epoch())
        for p in range(0, 256, 4):
            copies = repeated[p:p + 4]
            self.assertEqual({i for i, _ in copies}, {copies[0][0]})
            for a in range(4):
                for b in range(a):
                    self.assertFalse(np.array_equal(copies[a][1], copies[b][1]),
                                     f"index {copies[0][0]}: copies {b} and {a} are equal")
            np.testing.assert_array_equal(copies[0][1], plain[copies[0][0]])

    def test_a_second_run_and_a_resumed_epoch_repeat_the_copies(self):
        first = self.epoch(ra_reps=4)
        again = self.epoch(ra_reps=4)
        for (i, a), (j, b) in zip(first, again):
            self.assertEqual(i, j)
            np.testing.assert_array_equal(a, b)
        loader = self.loader(ra_reps=4)
        loader.set_epoch(1)
        it = iter(loader)
        head = self.samples([next(it), next(it), next(it)], [])
        state = loader.state_dict()
        loader.close()
        resumed = self.loader(ra_reps=4)
        resumed.load_state_dict(state)
        rest = self.samples(resumed, [])
        resumed.close()
        self.assertEqual(len(head) + len(rest), len(first))
        for (i, a), (j, b) in zip(head + rest, first):
            self.assertEqual(i, j)
            np.testing.assert_array_equal(a, b)

    def test_a_state_of_another_ra_reps_is_refused(self):
        loader = self.loader(ra_reps=4)
        state = loader.state_dict()
        loader.close()
        plain = self.loader()
        with self.assertRaisesRegex(stoker.Error, "ra_reps 4; this sampler has ra_reps 1"):
            plain.load_state_dict(state)
        plain.close()


if __name__ == "__main__":
    unittest.main()
