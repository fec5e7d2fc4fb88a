"""stoker.transforms.augmix against torchvision's AugMix (severity 3, 3 chains, depth 1..3,
all_ops) replaying stoker's draw: the draw's Beta and Dirichlet values through AugMix's
_sample_dirichlet (the method torchvision keeps apart so that tests can replace it) and its
depths, operations, bins and signs through torch.randint, on PIL images of the real-image
corpus (reduced to at most 128 pixels a side so that the run takes seconds), bilinear and
nearest: within one intensity level on at least 99.9 % of the values, of all and of each
sample (34.8 million values here, 16 of them more than one level apart). Bicubic is refused,
naming both options, as torchvision refuses it.

Where the corpus cannot be fetched the comparison is skipped, saying so.
"""
import unittest
from unittest import mock

import numpy as np
from PIL import Image

import stoker
from stoker.transforms import augmix
from test_augment_ops import corpus_images
from test_corpus import require_corpus
from testdata import smooth_pixels

try:
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.autoaugment import AugMix
except ImportError:  # the comparison is skipped, saying so
    AugMix = None

KEYS = range(6)


def torchvision_augmix(image, draw, interpolation):
    """torchvision's AugMix on the PIL image of `image`, drawing what stoker drew."""
    aug = AugMix(interpolation=InterpolationMode(interpolation))
    dirichlet = iter([torch.tensor([draw["m"]]), torch.tensor([draw["weights"]])])
    ints = []
    for chain in draw["chains"]:
        ints.append(len(chain))  # the depth (chain_depth=-1)
        for step in chain:
            ints.append(step["op_index"])
            if step["op"] not in ("AutoContrast", "Equalize"):  # the ones with magnitudes
                ints.append(step["bin"])
            if step["op"] in SIGNED:
                ints.append(int(step["negate"]))
    ints = iter(ints)
    with mock.patch.object(aug, "_sample_dirichlet", lambda params: next(dirichlet)), \
            mock.patch("torch.randint", lambda *a, **k: torch.tensor([next(ints)])):
        out = np.asarray(aug(Image.fromarray(image)))
    assert next(ints, None) is None, "torchvision drew fewer values than stoker"
    return out


SIGNED = ("ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color",
          "Contrast", "Sharpness")


@unittest.skipIf(AugMix is None, "no torchvision here")
class AgainstTorchvision(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_corpus()
        cls.images = corpus_images(limit=128)

    def test_mix_is_torchvisions_within_one_level(self):
        total = far = 0
        ops = set()
        for interpolation in ("bilinear", "nearest"):
            for n, image in enumerate(self.images):
                for key in KEYS:
                    got, draw = augmix(image, key, seed=n, interpolation=interpolation)
                    want = torchvision_augmix(image, draw, interpolation)
                    self.assertEqual(got.shape, want.shape)
                    diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
                    total += diff.size
                    far += int(np.count_nonzero(diff > 1))
                    # Each sample too: with PIL's rounding for the colour operations a chain
                    # (Brightness, then Solarize) could put 40 % of one sample 40 levels off.
                    self.assertLessEqual(np.count_nonzero(diff > 1), diff.size * 0.001,
                                         f"image {n}, key {key}, {interpolation}: {draw}")
                    ops.update(step["op"] for chain in draw["chains"] for step in chain)
        print(f"{total} values, {far} more than one level apart; operations drawn: "
              f"{sorted(ops)}")
        self.assertEqual(len(ops), 13)  # every operation of the space was exercised
        self.assertLessEqual(far, total * 0.001)


class TheDraw(unittest.TestCase):
    def test_the_draw_is_the_keys(self):
        image = smooth_pixels(40, 50)
        first, draw = augmix(image, 7, seed=3, epoch=2)
        again, same = augmix(image, 7, seed=3, epoch=2)
        self.assertEqual(draw, same)
        np.testing.assert_array_equal(first, again)
        self.assertNotEqual(augmix(image, 8, seed=3, epoch=2)[1], draw)
        self.assertAlmostEqual(sum(draw["weights"]), 1.0, places=6)
        self.assertAlmostEqual(sum(draw["m"]), 1.0, places=6)
        for chain in draw["chains"]:
            self.assertIn(len(chain), (1, 2, 3))
            for step in chain:
                self.assertIn(step["bin"], (0, 1, 2))

    def test_bicubic_is_refused_naming_both_options(self):
        with self.assertRaisesRegex(stoker.Error, "auto_augment_policy=augmix.*bicubic"):
            augmix(smooth_pixels(8, 8), 0, interpolation="bicubic")


if __name__ == "__main__":
    unittest.main()
