"""stoker.Loader.dataset: what scripts read from DataLoader.dataset (len(), classes,
class_to_idx), as torchvision's ImageFolder has them for an image folder; for shards, tokens
and records len() and classes None with the reason."""
import io
import os
import tarfile
import unittest

import numpy as np
from PIL import Image
from torchvision.datasets import ImageFolder

import stoker
from testdata import make_records, make_tokens, TempDirCase

# Names whose order tells sort rules apart: case, digits, a non-ASCII letter, a dot.
CLASSES = ["n01440764", "Zebra", "apple", "c10", "c2", "\u00e9clair", "z.last", "_under"]
PER_CLASS = [2, 1, 3, 1, 2, 1, 1, 2]


class LoaderDataset(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.root = os.path.join(cls.tmp.path, "images")
        pixels = np.random.default_rng(0).integers(0, 256, size=(20, 24, 3), dtype=np.uint8)
        cls.jpeg = io.BytesIO()
        Image.fromarray(pixels).save(cls.jpeg, format="JPEG")
        for name, count in zip(CLASSES, PER_CLASS):
            os.makedirs(os.path.join(cls.root, name))
            for i in range(count):
                with open(os.path.join(cls.root, name, f"{i}.jpg"), "wb") as f:
                    f.write(cls.jpeg.getvalue())

    def images(self, **kw):
        kw.setdefault("world_size", 1)
        kw.setdefault("rank", 0)
        loader = stoker.Loader.images(batch_size=4, size=16, resize_shorter=16, train=False,
                                      workers=1, **kw)
        self.addCleanup(loader.close)
        return loader

    def test_an_image_folder_as_imagefolder(self):
        theirs = ImageFolder(self.root)
        ours = self.images(root=self.root).dataset
        self.assertEqual(ours.classes, theirs.classes)
        self.assertEqual(ours.class_to_idx, theirs.class_to_idx)
        self.assertEqual(len(ours), len(theirs))
        self.assertEqual(len(ours), sum(PER_CLASS))
        self.assertIsNone(ours.no_classes)
        self.assertIn(f"{len(CLASSES)} classes", repr(ours))

    def test_len_is_the_whole_dataset_on_every_rank(self):
        loader = self.images(root=self.root, world_size=3, rank=2)
        self.assertEqual(len(loader.dataset), sum(PER_CLASS))
        self.assertLess(loader.samples_per_epoch, len(loader.dataset))

    def test_the_reference_scripts_evaluation_reads(self):
        # What an evaluation function reads: the dataset's length against the samples it
        # counted, and the class count for the model's head.
        loader = self.images(root=self.root)
        counted = sum(len(labels) for _, labels in loader)
        self.assertEqual(counted, len(loader.dataset))
        self.assertEqual(len(loader.dataset.classes), len(CLASSES))

    def test_shards_have_a_length_and_no_class_names(self):
        shard = os.path.join(self.tmp.path, "shard-000.tar")
        with tarfile.open(shard, "w") as tar:
            for n in range(5):
                for name, payload in ((f"s{n}.jpg", self.jpeg.getvalue()),
                                      (f"s{n}.cls", str(n % 2).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        dataset = self.images(shards=[shard]).dataset
        self.assertEqual(len(dataset), 5)
        self.assert_no_classes(dataset, "tar shards carry numbers as labels")

    def test_tokens_and_records(self):
        tokens = os.path.join(self.tmp.path, "tokens.bin")
        make_tokens(tokens, 8 * 10 + 1)
        loader = stoker.Loader.tokens(tokens, seq_len=8, batch_size=2, world_size=1, rank=0,
                                      workers=1)
        self.addCleanup(loader.close)
        self.assertEqual(len(loader.dataset), 10)
        self.assertEqual(len(loader.dataset), loader.dataset_size)
        self.assert_no_classes(loader.dataset, "token windows have no labels")
        path, labels, _ = make_records(self.tmp.path, 7, 12)
        loader = stoker.Loader.records(path, record_bytes=12, labels_path=labels, batch_size=2,
                                       world_size=1, rank=0, workers=1)
        self.addCleanup(loader.close)
        self.assertEqual(len(loader.dataset), 7)
        self.assert_no_classes(loader.dataset, "record labels are numbers")

    def assert_no_classes(self, dataset, why):
        self.assertIsNone(dataset.classes)
        self.assertIsNone(dataset.class_to_idx)
        self.assertTrue(dataset.no_classes.startswith(why), dataset.no_classes)
        self.assertIn("no classes: " + why, repr(dataset))
        with self.assertRaises(TypeError):  # a class count from it fails, never 0
            len(dataset.classes)


if __name__ == "__main__":
    unittest.main()
