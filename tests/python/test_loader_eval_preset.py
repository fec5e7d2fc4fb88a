"""The evaluation loader against torchvision's evaluation preset: Loader.images(train=False,
resize_shorter=R, size=C) is the reference scripts' ClassificationPresetEval(crop_size=C,
resize_size=R) with its default bilinear interpolation (Resize(R) + CenterCrop(C) +
PILToTensor + ConvertImageDtype + Normalize on PIL images), the mapping the user guide gives
for --val-resize-size / --val-crop-size. torchvision's transforms are run here, on PIL images
of the same files. Tolerances as test_loader_images.py (dct_scaling=False): max |difference|
<= 1.5 and mean <= 0.5 in 0..255 units."""
import unittest

import numpy as np
import torch
from PIL import Image
from torchvision import transforms as T

import stoker
from testdata import ImageFolderCase

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def eval_preset(resize_size, crop_size):
    """torchvision's evaluation preset for PIL images, bilinear (the reference's default)."""
    return T.Compose([T.Resize(resize_size, interpolation=T.InterpolationMode.BILINEAR),
                      T.CenterCrop(crop_size), T.PILToTensor(),
                      T.ConvertImageDtype(torch.float), T.Normalize(mean=MEAN, std=STD)])


class EvalPreset(ImageFolderCase, unittest.TestCase):
    FOLDER = {"classes": 2, "per_class": 6}

    def compare(self, resize_size, crop_size):
        preset = eval_preset(resize_size, crop_size)
        loader = stoker.Loader.images(self.root, train=False, resize_shorter=resize_size,
                                      size=crop_size, batch_size=4, shuffle=False,
                                      dct_scaling=False, world_size=1, rank=0, workers=1,
                                      return_indices=True)
        self.addCleanup(loader.close)
        scale = np.array(STD).reshape(3, 1, 1) * 255
        worst = []
        for data, labels, indices in loader:
            for k, i in enumerate(indices.tolist()):
                path, label = self.items[i]
                self.assertEqual(labels[k].item(), label)
                theirs = preset(Image.open(path).convert("RGB")).numpy()
                ours = data[k].numpy()
                self.assertEqual(ours.shape, theirs.shape)
                worst.append(np.abs(ours - theirs) * scale)
        diffs = np.stack(worst)
        self.assertEqual(len(diffs), len(self.items))
        self.assertLessEqual(diffs.max(), 1.5)
        self.assertLessEqual(diffs.mean(), 0.5)

    def test_the_references_default_sizes(self):
        self.compare(256, 224)

    def test_the_resnet50_recipes_val_resize_size(self):
        self.compare(232, 224)

    def test_small_sizes_with_odd_margins(self):
        self.compare(47, 32)  # centre crop margins that round: torchvision's round()


if __name__ == "__main__":
    unittest.main()
