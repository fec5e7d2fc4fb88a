"""stoker.Loader.images with the reference preset's --auto-augment and --random-erase
(auto_augment_policy, ra_magnitude, random_erase_prob):

- with TrivialAugmentWide each training sample is torchvision's _apply_op (bilinear, as the
  preset passes it) of one operation and magnitude of the policy's space on the very crop
  and flip stoker gives without it;
- with AugMix each training sample is stoker.transforms.augmix (held to torchvision's AugMix
  by test_augmix.py) of the sample's key on the very crop and flip stoker gives without it;
- a second loader of the same seed, and one resumed mid-epoch from a state_dict, give the
  same bytes (the draws are the samples' keys'), another epoch others;
- random erasing zeroes a box, its boxes distributed as torchvision's RandomErasing draws
  them (size, place, how often none fits); evaluation neither augments nor erases;
- bad values are ValueError or TypeError naming the option; AugMix with bicubic a
  stoker.Error naming both options.
"""
import unittest

import numpy as np
from PIL import Image

import stoker
from stoker.transforms import apply_op, augmentation_space, augmix
from testdata import ImageFolderCase

try:
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.autoaugment import _apply_op
except ImportError:
    _apply_op = None

SIZE = 32


class AugmentedLoader(ImageFolderCase, unittest.TestCase):
    def loader(self, **kw):
        kw = {"train": True, "dtype": "uint8", "layout": "HWC", **kw}
        return stoker.Loader.images(self.root, batch_size=6, size=SIZE, seed=3, world_size=1,
                                    rank=0, return_indices=True, **kw)

    @staticmethod
    def samples(batches, out=None):
        out = {} if out is None else out
        for data, _, indices in batches:
            for k, i in enumerate(indices.tolist()):
                out[i] = np.array(data[k].numpy())
        return out

    def batches(self, epoch=0, **kw):
        """{index: HWC uint8 sample} over one epoch."""
        loader = self.loader(**kw)
        loader.set_epoch(epoch)
        out = self.samples(loader)
        loader.close()
        return out

    @unittest.skipIf(_apply_op is None, "no torchvision here")
    def test_trivial_augment_wide_is_one_of_torchvisions_operations_on_the_same_crop(self):
        plain = self.batches()
        augmented = self.batches(auto_augment_policy="ta_wide")
        self.assertEqual(sorted(augmented), sorted(plain))
        space = augmentation_space("ta_wide", image_size=(SIZE, SIZE))
        ops = set()
        for i, base in plain.items():
            found = None
            for op, (magnitudes, signed) in space.items():
                for m in magnitudes or (0.0,):
                    for sign in ((1, -1) if signed else (1,)):
                        if np.array_equal(apply_op(base, op, sign * m, "bilinear"),
                                          augmented[i]):
                            found = found or (op, sign * m)
            self.assertIsNotNone(found, f"sample {i}: no operation of the space gives it")
            want = _apply_op(Image.fromarray(base), found[0], found[1],
                             InterpolationMode.BILINEAR, None)
            np.testing.assert_array_equal(augmented[i], np.asarray(want), err_msg=str(found))
            ops.add(found[0])
        self.assertGreater(len(ops), 5, ops)

    def test_the_same_seed_repeats_the_draws_and_another_epoch_does_not(self):
        options = {"auto_augment_policy": "ra", "ra_magnitude": 15, "random_erase_prob": 0.5}
        first, again = self.batches(**options), self.batches(**options)
        for i in first:
            np.testing.assert_array_equal(first[i], again[i])
        other = self.batches(epoch=1, **options)
        self.assertTrue(any(not np.array_equal(first[i], other[i]) for i in first))
        self.assert_resumed_repeats(first, **options)
        for policy in ("imagenet", "cifar10", "svhn"):
            self.assertEqual(len(self.batches(auto_augment_policy=policy)), len(self.items))

    def assert_resumed_repeats(self, first, **options):
        """A loader resumed mid-epoch from a checkpoint gives the rest of the epoch as it was
        (`first`: the whole epoch's samples)."""
        loader = self.loader(**options)
        it = iter(loader)
        resumed_samples = self.samples([next(it), next(it)])
        state = loader.state_dict()
        it.close()
        loader.close()
        resumed = self.loader(**options)
        resumed.load_state_dict(state)
        self.samples(resumed, resumed_samples)
        resumed.close()
        self.assertEqual(sorted(resumed_samples), sorted(first))
        for i in first:
            np.testing.assert_array_equal(resumed_samples[i], first[i])

    def test_augmix_is_stokers_augmix_of_the_same_crop_and_a_resumed_epoch_repeats_it(self):
        plain = self.batches()
        for interpolation in ("bilinear", "nearest"):
            options = {"auto_augment_policy": "augmix", "interpolation": interpolation}
            mixed = self.batches(**options)
            self.assertEqual(sorted(mixed), sorted(plain))
            crops = self.batches(interpolation=interpolation)
            for i, crop in crops.items():  # sample i's key: (seed 3, epoch 0, index i)
                want, _ = augmix(crop, i, seed=3, epoch=0, interpolation=interpolation)
                np.testing.assert_array_equal(mixed[i], want, err_msg=f"sample {i}")
            self.assertTrue(any(not np.array_equal(mixed[i], crops[i]) for i in crops))
            self.assert_resumed_repeats(mixed, **options)

    def test_random_erasing_zeroes_a_box_and_evaluation_does_neither(self):
        plain, erased = self.batches(), self.batches(random_erase_prob=1.0)
        boxes = 0
        for i in plain:
            changed = np.any(plain[i] != erased[i], axis=2)
            if changed.any():
                rows, cols = np.nonzero(changed)
                box = erased[i][rows.min():rows.max() + 1, cols.min():cols.max() + 1]
                self.assertTrue((box == 0).all(), i)
                boxes += 1
        self.assertGreater(boxes, len(plain) // 2)
        evaluation = {"train": False, "resize_shorter": 40}
        self.assertTrue(all(np.array_equal(a, b) for a, b in zip(
            self.batches(**evaluation).values(),
            self.batches(auto_augment_policy="ta_wide", random_erase_prob=1.0,
                         **evaluation).values())))

    @unittest.skipIf(_apply_op is None, "no torchvision here")
    def test_erased_boxes_follow_torchvisions_distribution(self):
        import torch
        from torchvision.transforms import RandomErasing

        # With mean -1 and std 1 every value is 1 or more, so the box's zeros are exact.
        ours = []
        for epoch in range(20):
            loader = self.loader(random_erase_prob=1.0, dtype="float32", mean=(-1, -1, -1),
                                 std=(1, 1, 1))
            loader.set_epoch(epoch)
            for data, _, _ in loader:
                for sample in data.numpy():
                    rows, cols = np.nonzero((sample == 0).all(axis=2))
                    ours.append((rows.min(), cols.min(), np.ptp(rows) + 1, np.ptp(cols) + 1)
                                if rows.size else None)
            loader.close()
        torch.manual_seed(0)
        theirs = []
        for _ in range(4000):
            i, j, h, w, _ = RandomErasing.get_params(torch.zeros(3, SIZE, SIZE), (0.02, 0.33),
                                                     (0.3, 3.3), [0.0])
            theirs.append(None if (h, w) == (SIZE, SIZE) else (i, j, h, w))

        def summary(boxes):
            kept = np.array([b for b in boxes if b is not None], dtype=np.float64)
            centre = kept[:, :2] + kept[:, 2:] / 2
            return {"no box": 1 - len(kept) / len(boxes), "h": kept[:, 2].mean(),
                    "w": kept[:, 3].mean(), "area": (kept[:, 2] * kept[:, 3]).mean() / SIZE ** 2,
                    "centre y": centre[:, 0].mean(), "centre x": centre[:, 1].mean()}

        got, want = summary(ours), summary(theirs)
        print("stoker", got, "\ntorchvision", want)
        self.assertEqual(len(ours), 20 * len(self.items))
        for key, tolerance in (("no box", 0.05), ("h", 1.0), ("w", 1.0), ("area", 0.02),
                               ("centre y", 1.0), ("centre x", 1.0)):
            self.assertAlmostEqual(got[key], want[key], delta=tolerance, msg=key)

    def test_bad_values_name_the_option(self):
        with self.assertRaisesRegex(ValueError, "auto_augment_policy='augmax'"):
            self.batches(auto_augment_policy="augmax")
        with self.assertRaisesRegex(TypeError, "auto_augment_policy"):
            self.batches(auto_augment_policy=1)
        with self.assertRaisesRegex(stoker.Error, "auto_augment_policy=augmix.*bicubic"):
            self.batches(auto_augment_policy="augmix", interpolation="bicubic")
        with self.assertRaisesRegex(ValueError, "random_erase_prob"):
            self.batches(random_erase_prob=1.5)
        with self.assertRaisesRegex(ValueError, "ra_magnitude"):
            self.batches(ra_magnitude=31)


if __name__ == "__main__":
    unittest.main()
