"""Every image kind on a real folder: 100 clean JPEGs mixed with one each of the kinds
that stopped runs before (CMYK, YCCK, grey, progressive, a PNG saved as .JPEG, 16-bit,
palette and RGBA PNGs) run a whole epoch with default options, nothing skipped. A
truncated JPEG and a zero-byte file stop the default run naming the file; under
on_corrupt='skip' they are counted and named, and the epoch completes."""
import os
import shutil
import unittest

from PIL import Image

import stoker
from testdata import NoLeftovers, TempDir, smooth_pixels, write_image_kinds

MIXED = {  # kind -> file name in the dataset (the .JPEG one is a PNG inside)
    "jpeg_cmyk": "cmyk.jpg", "ycck": "ycck.jpg", "jpeg_grey": "grey.jpg",
    "jpeg_progressive": "progressive.jpg", "png_rgb": "n01440764_really_png.JPEG",
    "png_grey16": "grey16.png", "png_palette": "palette.png", "png_rgba": "rgba.PNG",
}


def load_all(root, **options):
    loader = stoker.Loader.images(root, batch_size=16, size=32, world_size=1, rank=0,
                                  workers=2, **options)
    labels = [int(v) for _, batch_labels in loader for v in batch_labels]
    return loader, labels


class MixedDataset(NoLeftovers, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.tmp = TempDir()
        self.root = os.path.join(self.tmp.path, "train")
        kinds = write_image_kinds(os.path.join(self.tmp.path, "kinds"))
        for i in range(100):
            folder = os.path.join(self.root, f"c{i % 2}")
            os.makedirs(folder, exist_ok=True)
            Image.fromarray(smooth_pixels(40, 48, seed=i)).save(
                os.path.join(folder, f"{i:03d}.jpg"), quality=90)
        for kind, name in MIXED.items():
            shutil.copy(kinds[kind], os.path.join(self.root, "c1", name))

    def tearDown(self):
        self.tmp.cleanup()

    def test_every_kind_runs_a_whole_epoch_with_defaults(self):
        loader, labels = load_all(self.root)
        self.assertEqual(len(labels), 108)
        self.assertEqual(labels.count(1), 58)
        self.assertEqual(loader.stats()["skipped"], 0)
        self.assertEqual(loader.stats()["skipped_files"], [])

    def test_truncated_and_empty_files_stop_the_default_run_or_are_skipped(self):
        truncated = os.path.join(self.root, "c0", "truncated.jpg")
        with open(os.path.join(self.root, "c0", "000.jpg"), "rb") as f:
            whole = f.read()
        with open(truncated, "wb") as f:
            f.write(whole[:len(whole) // 2])
        empty = os.path.join(self.root, "c1", "empty.jpg")
        open(empty, "wb").close()

        with self.assertRaises(stoker.Error) as ctx:
            load_all(self.root)
        message = str(ctx.exception)
        self.assertTrue(message.startswith(truncated) or message.startswith(empty), message)
        self.assertIn("on_corrupt='skip'", message)

        # 2 of 110 is more than the default max_skip_fraction (1 %): stopped at the end.
        with self.assertRaises(stoker.Error) as ctx:
            load_all(self.root, on_corrupt="skip")
        self.assertIn("2 of the 110 samples of epoch 0", str(ctx.exception))
        self.assertIn("raise max_skip_fraction", str(ctx.exception))

        loader, labels = load_all(self.root, on_corrupt="skip", max_skip_fraction=0.05)
        self.assertEqual(len(labels), 108)
        stats = loader.stats()
        self.assertEqual(stats["skipped"], 2)
        self.assertEqual(sorted(stats["skipped_files"]), sorted([truncated, empty]))


if __name__ == "__main__":
    unittest.main()
