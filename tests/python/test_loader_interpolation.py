"""Loader.images(interpolation=...) against torchvision 0.14's transforms on PIL images, the
reference preset's --interpolation: RandomResizedCrop (its box from stoker.crop_box, cut out
and resized by torchvision's F.resized_crop, then flipped as stoker.flipped says) and the
evaluation preset's Resize + CenterCrop, with PIL's filters:

- bicubic (PIL's a = -0.5 kernel, antialiased, its 8-bit image clamped between the horizontal
  and the vertical pass): bilinear's tolerances (test_loader_eval_preset.py): float32 within
  1.5 and on average 0.5 levels of 0..255, uint8 within 1 level;
- nearest (PIL's pixel choice, no filter): the same bytes in uint8, and the same values
  normalised in float32 (float rounding only);
- on smooth images and on sharp saturated stripes (where bicubic overshoots), and on the
  real-file corpus's JPEG and PNG files (tests/corpus/; skipped, saying so, where it cannot be
  fetched);
- with TrivialAugmentWide, the operations sample with the same interpolation (the preset
  passes it to the policy).

Always dct_scaling=False: libjpeg's 1/2-1/8 downscale is its own filter, for every
interpolation alike.
"""
import os
import subprocess
import sys
import unittest

import numpy as np
from PIL import Image

import stoker
from stoker.transforms import apply_op, augmentation_space
from testdata import ImageFolderCase, TempDirCase

try:
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms import functional as F
except ImportError:
    F = None

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import corpus  # noqa: E402

MEAN = np.array([0.485, 0.456, 0.406]).reshape(3, 1, 1)
STD = np.array([0.229, 0.224, 0.225]).reshape(3, 1, 1)
SEED = 11


def stripes(h, w, period):
    """Saturated diagonal stripes, the three channels out of phase: every edge overshoots."""
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([((x * 7 + y * 3 + c * 2) % period < period // 2) * 255 for c in range(3)],
                    axis=-1).astype(np.uint8)


def torchvision_sample(path, index, interpolation, opts, epoch=0):
    """torchvision's pipeline on the PIL image, as HWC uint8, for stoker's crop and flip."""
    image = Image.open(path).convert("RGB")
    mode = InterpolationMode(interpolation)
    if opts["train"]:
        x, y, w, h = stoker.crop_box(image.width, image.height, SEED, epoch, index, opts)
        out = F.resized_crop(image, int(y), int(x), int(h), int(w), [opts["size"]] * 2, mode)
        if stoker.flipped(SEED, epoch, index, opts):
            out = F.hflip(out)
    else:
        out = F.center_crop(F.resize(image, opts["resize_shorter"], mode), opts["size"])
    return np.asarray(out)


def loader_samples(root, interpolation, opts, dtype="uint8", epoch=0, **kw):
    """{index: sample} of one epoch: HWC uint8, or CHW float32 in 0..255 units."""
    loader = stoker.Loader.images(root, batch_size=5, seed=SEED, world_size=1, rank=0,
                                  workers=1, dct_scaling=False, return_indices=True,
                                  interpolation=interpolation, dtype=dtype,
                                  layout="HWC" if dtype == "uint8" else "CHW", **opts, **kw)
    loader.set_epoch(epoch)
    out = {}
    for data, _, indices in loader:
        for k, i in enumerate(indices.tolist()):
            sample = np.array(data[k].numpy())  # a copy: the batch goes back to its slot
            out[i] = sample if dtype == "uint8" else (sample * STD + MEAN) * 255
    loader.close()
    return out


TRAIN = {"train": True, "size": 32, "resize_shorter": 32}
EVAL = {"train": False, "size": 32, "resize_shorter": 41}


@unittest.skipIf(F is None, "no torchvision here")
class Interpolation(ImageFolderCase, unittest.TestCase):
    FOLDER = {"classes": 2, "per_class": 5}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        folder = os.path.join(cls.root, "c2")  # sorts after the smooth classes c0 and c1
        os.makedirs(folder)
        for k, (h, w, period) in enumerate(((37, 53, 5), (120, 90, 9), (64, 64, 4))):
            path = os.path.join(folder, f"{k:03d}.png")
            Image.fromarray(stripes(h, w, period)).save(path)
            cls.items.append((path, 2))

    def compare(self, interpolation, opts, dtype, epoch=0):
        """max and mean |stoker - torchvision| over the folder, in 0..255 units."""
        ours = loader_samples(self.root, interpolation, opts, dtype, epoch)
        self.assertEqual(sorted(ours), list(range(len(self.items))))
        diffs = []
        for i, sample in ours.items():
            want = torchvision_sample(self.items[i][0], i, interpolation, opts, epoch)
            got = sample if dtype == "uint8" else sample.transpose(1, 2, 0)
            self.assertEqual(got.shape, want.shape)
            diffs.append(np.abs(got.astype(np.float64) - want))
        diffs = np.stack(diffs)
        return diffs.max(), diffs.mean()

    def test_bicubic_in_training_and_evaluation(self):
        for opts in (TRAIN, EVAL):
            for epoch in (0, 2):
                worst, mean = self.compare("bicubic", opts, "float32", epoch)
                self.assertLessEqual(worst, 1.5, (opts, epoch))
                self.assertLessEqual(mean, 0.5, (opts, epoch))
            worst, _ = self.compare("bicubic", opts, "uint8")
            self.assertLessEqual(worst, 1.0, opts)

    def test_nearest_gives_pils_pixels(self):
        for opts in (TRAIN, EVAL):
            for epoch in (0, 2):
                worst, _ = self.compare("nearest", opts, "uint8", epoch)
                self.assertEqual(worst, 0, (opts, epoch))
            worst, _ = self.compare("nearest", opts, "float32")
            self.assertLess(worst, 1e-3, opts)  # the same bytes, normalised in float32

    def test_the_policys_operations_sample_with_the_interpolation(self):
        size = TRAIN["size"]
        plain = loader_samples(self.root, "bicubic", TRAIN)
        augmented = loader_samples(self.root, "bicubic", TRAIN, auto_augment_policy="ta_wide")
        space = augmentation_space("ta_wide", image_size=(size, size))
        geometric = 0
        for i, base in plain.items():
            found = [(op, sign * m) for op, (magnitudes, signed) in space.items()
                     for m in magnitudes or (0.0,) for sign in ((1, -1) if signed else (1,))
                     if np.array_equal(apply_op(base, op, sign * m, "bicubic"), augmented[i])]
            self.assertTrue(found, f"sample {i}: no bicubic operation of the space gives it")
            geometric += found[0][0] in ("Rotate", "ShearX", "ShearY", "TranslateX", "TranslateY")
        self.assertGreater(geometric, 0, "no geometric operation was drawn: draw more samples")

    def test_a_bad_interpolation_names_the_option(self):
        with self.assertRaisesRegex(ValueError, "interpolation='box'"):
            loader_samples(self.root, "box", TRAIN)
        with self.assertRaisesRegex(TypeError, "interpolation"):
            loader_samples(self.root, 2, TRAIN)


@unittest.skipIf(F is None, "no torchvision here")
class InterpolationOnTheCorpus(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        got = subprocess.run([sys.executable, corpus.__file__, "fetch"], capture_output=True,
                             text=True, timeout=1800)
        if got.returncode != 0:
            raise unittest.SkipTest(f"the real-image corpus cannot be fetched: {got.stderr}")
        # The cut progressive JPEG is left out: its rows decoded for a crop differ from PIL's
        # whole decode by up to 3 levels with every interpolation, bilinear too (the decode's
        # matter, not the resize's).
        paths = [path for path, kinds in corpus.manifest()
                 if kinds[0].split(",")[0] in ("JPEG", "PNG") and os.path.exists(path)
                 and "truncated" not in os.path.basename(path)]
        if not paths:
            raise unittest.SkipTest("no JPEG or PNG in the corpus")
        super().setUpClass()  # makes cls.tmp
        cls.root = os.path.join(cls.tmp.path, "corpus")
        os.makedirs(os.path.join(cls.root, "all"))
        cls.paths = []
        for k, path in enumerate(paths):
            link = os.path.join(cls.root, "all", f"{k:04d}{os.path.splitext(path)[1].lower()}")
            os.symlink(path, link)
            cls.paths.append(link)
        cls.paths.sort()

    def worst(self, interpolation, opts):
        worst = 0
        for i, got in loader_samples(self.root, interpolation, opts).items():
            want = torchvision_sample(self.paths[i], i, interpolation, opts)
            worst = max(worst, int(np.abs(got.astype(int) - want).max()))
        return worst

    def test_nearest_and_bicubic_on_real_files(self):
        opts = ({"train": True, "size": 64, "resize_shorter": 64},
                {"train": False, "size": 56, "resize_shorter": 64})
        for o in opts:
            self.assertEqual(self.worst("nearest", o), 0, o)
            self.assertLessEqual(self.worst("bicubic", o), 1, o)


if __name__ == "__main__":
    unittest.main()
