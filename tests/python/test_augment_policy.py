"""stoker's augmentation policies' tables (stoker.transforms.augmentation_space and
sub_policies, the C++ tables its policies draw from) against torchvision's: each class's
_augmentation_space(num_bins, image_size) (the operations in their order, every magnitude
bin as torch.linspace gives it, the signs) for TrivialAugmentWide, RandAugment,
AutoAugment and AugMix (all_ops=True), and AutoAugment's ImageNet, CIFAR-10 and SVHN sub-policies."""
import unittest

import stoker
from stoker.transforms import POLICIES, augmentation_space, sub_policies

try:
    import torch
    from torchvision.transforms import autoaugment
except ImportError:  # the comparisons are skipped, saying so
    autoaugment = None

SIZES = ((224, 224), (176, 176), (37, 1000), (1, 1))
BINS = (2, 3, 10, 11, 17, 31, 32, 100)


def as_tables(space):
    """torchvision's {op: (tensor, signed)} as stoker gives it: tuples of floats."""
    return {op: (tuple(float(m) for m in magnitudes.reshape(-1)) if magnitudes.ndim else (),
                 signed) for op, (magnitudes, signed) in space.items()}


def torch_rounds_as_stoker():
    """stoker's magnitudes are the float32 values of torch's AVX2 linspace kernel, the one
    torch picks on any x86-64 CPU with AVX2; another kernel may differ in the last bit."""
    return "CPU capability usage: AVX2" in torch.__config__.show()


@unittest.skipIf(autoaugment is None, "no torchvision here")
class AgainstTorchvision(unittest.TestCase):
    def assert_space(self, got, want):
        self.assertEqual(list(got), list(want), "the operations and their order")
        for op in want:
            (g, g_signed), (w, w_signed) = got[op], want[op]
            self.assertEqual(g_signed, w_signed, op)
            if torch_rounds_as_stoker():
                self.assertEqual(g, w, op)
            else:
                self.assertEqual(len(g), len(w), op)
                for a, b in zip(g, w):
                    self.assertAlmostEqual(a, b, delta=abs(b) * 2 ** -22, msg=op)

    def test_trivial_augment_wide(self):
        for bins in BINS:
            want = as_tables(autoaugment.TrivialAugmentWide()._augmentation_space(bins))
            for size in SIZES:
                with self.subTest(bins=bins, size=size):
                    self.assert_space(augmentation_space("ta_wide", bins, size), want)
        self.assert_space(augmentation_space("ta_wide"),
                          as_tables(autoaugment.TrivialAugmentWide()._augmentation_space(31)))

    def test_rand_augment_and_augmix_all_ops(self):
        # Their default bins: RandAugment's num_magnitude_bins, AugMix's _PARAMETER_MAX.
        for name, policy, default_bins in (("ra", autoaugment.RandAugment, 31),
                                           ("augmix", autoaugment.AugMix, 10)):
            for bins in BINS:
                for size in SIZES:
                    with self.subTest(policy=name, bins=bins, size=size):
                        want = policy()._augmentation_space(bins, size)
                        self.assert_space(augmentation_space(name, bins, size), as_tables(want))
            want = policy()._augmentation_space(default_bins, (224, 224))
            self.assert_space(augmentation_space(name), as_tables(want))

    def test_auto_augment_spaces_and_sub_policies(self):
        for policy in ("imagenet", "cifar10", "svhn"):
            torchvision_policy = autoaugment.AutoAugmentPolicy(policy)
            self.assertEqual(sub_policies(policy),
                             autoaugment.AutoAugment(torchvision_policy).policies, policy)
            for size in SIZES:
                with self.subTest(policy=policy, size=size):
                    want = autoaugment.AutoAugment()._augmentation_space(10, size)
                    self.assert_space(augmentation_space(policy, image_size=size),
                                      as_tables(want))

    def test_the_policies_without_sub_policies(self):
        for policy in ("ta_wide", "ra", "augmix"):
            self.assertEqual(sub_policies(policy), [])
        self.assertEqual(POLICIES, ("ta_wide", "ra", "imagenet", "cifar10", "svhn", "augmix"))


class BadArguments(unittest.TestCase):
    def test_each_names_its_argument(self):
        with self.assertRaisesRegex(ValueError, "policy='augmax'"):
            augmentation_space("augmax")
        with self.assertRaisesRegex(TypeError, "policy"):
            sub_policies(None)
        with self.assertRaisesRegex(ValueError, "num_bins=1"):
            augmentation_space("ra", 1)
        with self.assertRaisesRegex(TypeError, "num_bins"):
            augmentation_space("ra", 3.0)
        with self.assertRaisesRegex(TypeError, "image_size"):
            augmentation_space("ra", 31, 224)
        with self.assertRaisesRegex(ValueError, "image_size=0"):
            augmentation_space("ra", 31, (0, 224))
        self.assertIsInstance(stoker.transforms.augmentation_space("ra"), dict)


if __name__ == "__main__":
    unittest.main()
