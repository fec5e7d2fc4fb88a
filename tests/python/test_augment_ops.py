"""stoker.transforms.apply_op against torchvision's _apply_op, the function its automatic
augmentation policies call, on PIL images of the real-image corpus (tests/corpus/, each
reduced by a whole factor to at most 256 pixels a side so that the run takes seconds) and on
synthetic images of odd and tiny sizes:

- identical bytes for Identity, Posterize, Solarize, AutoContrast, Equalize, Invert and the
  flips (torchvision's hflip and vflip);
- within one intensity level on at least 99.9 % of the values for Rotate, ShearX/Y,
  TranslateX/Y, Brightness, Color, Contrast and Sharpness, with each interpolation and fill,
  over the policies' magnitudes, negative ones included;
- a bad image, op name, magnitude, interpolation or fill is a ValueError or TypeError naming
  the argument, before anything runs.

Where the corpus cannot be fetched the corpus tests are skipped, saying so.
"""
import unittest
import warnings

import numpy as np
from PIL import Image

from stoker.transforms import OP_NAMES, apply_op
from test_corpus import corpus, require_corpus
from testdata import smooth_pixels

try:
    import torchvision.transforms.functional as F
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.autoaugment import _apply_op
except ImportError:  # the comparisons are skipped, saying so
    F = _apply_op = None

EXACT = ("Identity", "Posterize", "Solarize", "AutoContrast", "Equalize", "Invert")
NEAR = ("Rotate", "ShearX", "ShearY", "TranslateX", "TranslateY", "Brightness", "Color",
        "Contrast", "Sharpness")
# The policies' magnitudes (TrivialAugmentWide's widest, RandAugment's and AutoAugment's lie
# inside them), both signs, and a few past them.
MAGNITUDES = {
    "Identity": [0.0],
    "ShearX": [-0.99, -0.3, 0.0, 0.1, 0.99, 1.7],
    "ShearY": [-0.99, -0.05, 0.3, 0.99],
    "TranslateX": [-32.0, -150.5, -0.9, 0.0, 10.7, 32.0, 1e9],
    "TranslateY": [-32.0, -3.7, 14.0, 32.0, -1e9],
    "Rotate": [-135.0, -30.0, -0.5, 0.0, 1.0, 17.3, 30.0, 90.0, 180.0, 270.0, -90.0, 450.0],
    "Brightness": [-0.99, -0.5, -0.1, 0.0, 0.3, 0.99, 2.5],
    "Color": [-0.99, -0.3, 0.0, 0.5, 0.99, -5.0],
    "Contrast": [-0.99, -0.2, 0.0, 0.4, 0.99, 3.0],
    "Sharpness": [-0.99, -0.4, 0.0, 0.3, 0.99, -2.0],
    "Posterize": [0.0, 1.0, 2.0, 4.0, 7.9, 8.0, -0.5],
    "Solarize": [-5.0, 0.0, 1.0, 100.5, 128.0, 254.9, 255.0, 256.0],
    "AutoContrast": [0.0],
    "Equalize": [0.0],
    "Invert": [0.0],
}


def corpus_images(limit=256):
    """The corpus's files as PIL opens them, in RGB, reduced by a whole factor (its pixels
    are still a real file's) to at most `limit` a side."""
    images = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PIL on palette PNGs with transparency
        for path, kinds in corpus.manifest():
            if kinds[0] == corpus.PIL_REFUSES:
                continue
            try:
                with Image.open(path) as image:
                    rgb = image.convert("RGB")
            except Exception:  # a format PIL opens only partly: test_corpus covers it
                continue
            factor = -(-max(rgb.size) // limit)
            images.append(np.asarray(rgb.reduce(factor) if factor > 1 else rgb))
    return images


def synthetic_images():
    rng = np.random.default_rng(47)
    images = [smooth_pixels(h, w, seed=h * w) for h, w in ((37, 53), (53, 37), (64, 64))]
    images += [rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
               for h, w in ((1, 1), (2, 3), (3, 3), (5, 300), (31, 31))]
    images.append(np.full((9, 11, 3), 77, np.uint8))  # one colour: the tables' edge cases
    return images


def torchvision_op(image, name, magnitude, interpolation, fill):
    pil = Image.fromarray(image)
    if name == "HorizontalFlip":
        return np.asarray(F.hflip(pil))
    if name == "VerticalFlip":
        return np.asarray(F.vflip(pil))
    return np.asarray(_apply_op(pil, name, magnitude, InterpolationMode(interpolation), fill))


class Compare:
    """Counts, per operation, the values compared and those off by any and by more than one
    level; `assert_rule` then holds each operation to its rule."""

    def __init__(self, test):
        self.test, self.counts = test, {}

    def run(self, images, names, interpolations=("nearest",), fills=(None,)):
        for name in names:
            for magnitude in MAGNITUDES.get(name, [0.0]):
                for interpolation in interpolations:
                    for fill in fills:
                        for image in images:
                            self.one(image, name, magnitude, interpolation, fill)

    def one(self, image, name, magnitude, interpolation, fill):
        want = torchvision_op(image, name, magnitude, interpolation, fill)
        got = apply_op(image, name, magnitude, interpolation, fill)
        self.test.assertEqual(got.shape, image.shape)
        self.test.assertEqual(got.dtype, np.uint8)
        diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
        total, off, far = self.counts.get(name, (0, 0, 0))
        self.counts[name] = (total + diff.size, off + int(np.count_nonzero(diff)),
                             far + int(np.count_nonzero(diff > 1)))
        if name not in NEAR and np.count_nonzero(diff):
            self.test.fail(f"{name}({magnitude}) on a {image.shape} image, {interpolation}, "
                           f"fill={fill}: {np.count_nonzero(diff)} values differ")

    def assert_rule(self):
        for name, (total, off, far) in sorted(self.counts.items()):
            print(f"{name}: {total} values, {off} differ, {far} by more than one level")
            if name in NEAR:
                self.test.assertLessEqual(far, total * 0.001, name)
            else:
                self.test.assertEqual(off, 0, name)


@unittest.skipIf(_apply_op is None, "no torchvision here")
class AgainstTorchvisionOnTheCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_corpus()
        cls.images = corpus_images()

    def test_the_tabled_operations_give_torchvisions_bytes(self):
        compare = Compare(self)
        compare.run(self.images, EXACT + ("HorizontalFlip", "VerticalFlip"))
        compare.assert_rule()

    def test_geometry_and_enhancements_within_one_level(self):
        compare = Compare(self)
        compare.run(self.images, NEAR)
        compare.assert_rule()

    def test_every_interpolation_and_fill(self):
        compare = Compare(self)
        geometry = ("Rotate", "ShearX", "ShearY", "TranslateX", "TranslateY")
        compare.run(self.images[::8], geometry, ("nearest", "bilinear", "bicubic"),
                    (None, [255, 0, 7], [128.0, 64.0, 250.0]))
        compare.assert_rule()


@unittest.skipIf(_apply_op is None, "no torchvision here")
class AgainstTorchvisionOnSyntheticImages(unittest.TestCase):
    def test_odd_tiny_and_one_colour_images(self):
        compare = Compare(self)
        compare.run(synthetic_images(), OP_NAMES, ("nearest", "bilinear", "bicubic"),
                    (None, [9, 200, 31]))
        compare.assert_rule()

    def test_interpolation_mode_and_a_single_fill_number(self):
        image = smooth_pixels(40, 50, seed=3)
        want = torchvision_op(image, "Rotate", 33.0, "bilinear", [17.0] * 3)
        got = apply_op(image, "Rotate", 33.0, InterpolationMode.BILINEAR, 17)
        np.testing.assert_array_equal(got, want)

    def test_numpy_scalars_and_a_strided_image(self):
        image = smooth_pixels(30, 40, seed=5)[:, ::2]
        want = torchvision_op(np.ascontiguousarray(image), "Solarize", 100.0, "nearest", None)
        np.testing.assert_array_equal(apply_op(image, "Solarize", np.float32(100.0)), want)


class BadArguments(unittest.TestCase):
    def setUp(self):
        self.image = smooth_pixels(8, 8)

    def raises(self, kind, naming, *args, **kwargs):
        with self.assertRaises(kind) as got:
            apply_op(*args, **kwargs)
        self.assertIn(naming, str(got.exception))

    def test_the_image(self):
        self.raises(TypeError, "image", [[[0, 0, 0]]], "Invert", 0)
        self.raises(TypeError, "uint8", self.image.astype(np.float32), "Invert", 0)
        self.raises(ValueError, "shape", self.image[..., :2], "Invert", 0)
        self.raises(ValueError, "shape", self.image[..., 0], "Invert", 0)

    def test_the_op_name(self):
        self.raises(ValueError, "op_name='Blur'", self.image, "Blur", 0)
        self.raises(ValueError, "ShearX", self.image, "shearx", 0)
        self.raises(TypeError, "op_name", self.image, None, 0)

    def test_the_magnitude(self):
        self.raises(TypeError, "magnitude", self.image, "Rotate", "30")
        self.raises(TypeError, "magnitude", self.image, "Rotate", True)
        self.raises(ValueError, "magnitude=nan", self.image, "Rotate", float("nan"))
        self.raises(ValueError, "magnitude=inf", self.image, "Brightness", float("inf"))
        self.raises(ValueError, "Posterize", self.image, "Posterize", 9)
        self.raises(ValueError, "Posterize", self.image, "Posterize", -1)

    def test_the_interpolation_and_fill(self):
        self.raises(ValueError, "interpolation='box'", self.image, "Rotate", 3, "box")
        self.raises(TypeError, "interpolation", self.image, "Rotate", 3, 2)
        self.raises(TypeError, "fill", self.image, "Rotate", 3, fill=[1, 2])
        self.raises(TypeError, "fill", self.image, "Rotate", 3, fill="red")
        self.raises(ValueError, "fill", self.image, "Rotate", 3, fill=[0, 0, 256])
        self.raises(ValueError, "fill", self.image, "Rotate", 3, fill=float("nan"))


if __name__ == "__main__":
    unittest.main()
