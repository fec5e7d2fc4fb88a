"""stoker.Loader.images on a real JPEG folder: labels in ImageFolder order, and pixels
against a Python reference of the same transform (PIL decode, the crop box stoker reports
for (seed, epoch, index), cut out and resized with PIL's antialiased bilinear filter as
torchvision's RandomResizedCrop does, flip, normalize).

Tolerances, in 0..255 pixel units (PIL resamples to uint8, so it rounds by up to 0.5, and
uses fixed-point weights): max |difference| <= 1.5 and mean <= 0.5 for float output with
dct_scaling=False; uint8 output within 1 level. With dct_scaling=True the decoder shrinks
large crops by 2/4/8 in the DCT first, which is a different (blockwise) filter: mean <= 4.
"""
import os
import unittest

import numpy as np
from PIL import Image

import stoker
from testdata import ImageFolderCase

MEAN = np.array([0.485, 0.456, 0.406])
STD = np.array([0.229, 0.224, 0.225])
SIZE = 32
SEED = 7


def reference(path, index, opts, epoch=0):
    """The transform in plain PIL/numpy: HWC float in 0..255 units."""
    image = Image.open(path).convert("RGB")
    x, y, w, h = stoker.crop_box(image.width, image.height, SEED, epoch, index, opts)
    if opts["train"]:  # RandomResizedCrop cuts the crop out first (F.resized_crop)
        out = image.crop((x, y, x + w, y + h)).resize((SIZE, SIZE), Image.BILINEAR)
    else:  # Resize + CenterCrop: the whole image's filter, read through the box
        out = image.resize((SIZE, SIZE), Image.BILINEAR, box=(x, y, x + w, y + h))
    if stoker.flipped(SEED, epoch, index, opts):
        out = out.transpose(Image.FLIP_LEFT_RIGHT)
    return np.asarray(out, dtype=np.float64)


class ImageLoader(ImageFolderCase, unittest.TestCase):
    def loader(self, **kw):
        kw.setdefault("world_size", 1)
        kw.setdefault("rank", 0)
        return stoker.Loader.images(self.root, batch_size=5, size=SIZE, seed=SEED,
                                    return_indices=True, **kw)

    def compare(self, train, epoch=0, **kw):
        opts = {"train": train, "size": SIZE, "resize_shorter": 40}
        loader = self.loader(train=train, resize_shorter=40, **kw)
        loader.set_epoch(epoch)
        diffs, seen = [], []
        for data, labels, indices in loader:
            for k, i in enumerate(indices.tolist()):
                path, label = self.items[i]
                self.assertEqual(labels[k].item(), label)
                ref = reference(path, i, opts, epoch)
                got = data[k].numpy().astype(np.float64)
                if kw.get("layout", "CHW") == "CHW":
                    got = got.transpose(1, 2, 0)
                if kw.get("dtype", "float32") != "uint8":
                    got = (got * STD + MEAN) * 255
                diffs.append(np.abs(got - ref))
                seen.append(i)
        self.assertEqual(sorted(seen), list(range(len(self.items))))
        diffs = np.stack(diffs)
        return diffs.max(), diffs.mean()

    def test_eval_pipeline_pixels(self):
        worst, mean = self.compare(train=False, dct_scaling=False)
        self.assertLessEqual(worst, 1.5)
        self.assertLessEqual(mean, 0.5)

    def test_train_pipeline_pixels(self):
        for epoch in (0, 3):
            worst, mean = self.compare(train=True, epoch=epoch, dct_scaling=False)
            self.assertLessEqual(worst, 1.5, f"epoch {epoch}")
            self.assertLessEqual(mean, 0.5, f"epoch {epoch}")

    def test_uint8_hwc(self):
        worst, _ = self.compare(train=True, dct_scaling=False, dtype="uint8", layout="HWC")
        self.assertLessEqual(worst, 1.0)

    def test_float16(self):
        worst, mean = self.compare(train=False, dct_scaling=False, dtype="float16")
        self.assertLessEqual(worst, 2.0)  # plus float16 rounding of values near |2|
        self.assertLessEqual(mean, 0.5)

    def test_dct_scaling_stays_close(self):
        _, mean = self.compare(train=False)
        self.assertLessEqual(mean, 4.0)

    def test_batches_shapes_and_length(self):
        loader = self.loader(train=False, drop_last=True)
        self.assertEqual(len(loader), 24 // 5)
        shapes = [tuple(x.shape) for x, _, _ in loader]
        self.assertEqual(shapes, [(5, 3, SIZE, SIZE)] * 4)
        self.assertEqual(loader.sample_spec, ("float32", [3, SIZE, SIZE]))
        self.assertEqual(loader.dataset_size, 24)

    def test_stats(self):
        loader = self.loader(train=False, workers=1)
        n = sum(x.shape[0] for x, _, _ in loader)
        s = loader.stats()
        self.assertEqual(s["samples"], n)
        self.assertEqual(s["workers"], 1)
        self.assertEqual(s["threads_created"], 1)
        self.assertGreater(s["stages"]["decode_ns"], 0)
        self.assertIn("delivered", s["summary"])

    def test_tar_shards(self):
        import io
        import tarfile

        shard = os.path.join(self.tmp.path, "shard-000.tar")
        with tarfile.open(shard, "w") as tar:
            for n, (path, label) in enumerate(self.items[:6]):
                with open(path, "rb") as f:
                    jpeg = f.read()
                for name, payload in ((f"s{n:03d}.jpg", jpeg),
                                      (f"s{n:03d}.cls", str(label).encode())):
                    info = tarfile.TarInfo(name)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        loader = stoker.Loader.images(shards=[shard], batch_size=3, size=SIZE, world_size=1,
                                      rank=0, shuffle=False)
        labels = [label for _, batch in loader for label in batch.tolist()]
        self.assertEqual(labels, [label for _, label in self.items[:6]])

    def write_shard(self, name, mode, with_labels=True):
        import io
        import tarfile

        shard = os.path.join(self.tmp.path, name)
        with tarfile.open(shard, mode) as tar:
            for n, (path, label) in enumerate(self.items):
                with open(path, "rb") as f:
                    members = [(f"s{n:03d}.jpg", f.read())]
                if with_labels:
                    members.append((f"s{n:03d}.cls", str(label).encode()))
                for member, payload in members:
                    info = tarfile.TarInfo(member)
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))
        return shard

    def test_compressed_shards_stream_every_sample_once(self):
        # The shards' sample counts are cached under STOKER_CACHE_DIR: here, not in $HOME.
        os.environ["STOKER_CACHE_DIR"] = os.path.join(self.tmp.path, "cache")
        gz = self.write_shard("shard-000.tar.gz", "w:gz")
        plain = self.write_shard("shard-001.tar", "w")
        for stream in (None, True):  # None: compressed shards stream by themselves
            loader = stoker.Loader.images(shards=[gz, plain], stream=stream, batch_size=5,
                                          size=SIZE, world_size=1, rank=0, shuffle_buffer=7,
                                          return_indices=True)
            seen = []
            for _, labels, indices in loader:
                for label, i in zip(labels.tolist(), indices.tolist()):
                    self.assertEqual(label, self.items[i % len(self.items)][1])
                    seen.append(i)
            self.assertEqual(sorted(seen), list(range(2 * len(self.items))))
            self.assertGreater(loader.stats()["stream_reads"]["reads"], 0)
        # The user's own part of the cache: <cache>/<uid>/shards.
        shards = os.path.join(self.tmp.path, "cache", str(os.geteuid()), "shards")
        self.assertEqual(len(os.listdir(shards)), 2)
        del os.environ["STOKER_CACHE_DIR"]

    def test_label_free_shards_need_labels_false(self):
        shard = self.write_shard("nolabels.tar", "w", with_labels=False)
        with self.assertRaises(stoker.Error) as ctx:
            stoker.Loader.images(shards=shard, batch_size=4, size=SIZE, world_size=1, rank=0)
        self.assertIn("nolabels.tar@", str(ctx.exception))
        self.assertIn("'s000.jpg') has no label member", str(ctx.exception))
        loader = stoker.Loader.images(shards=shard, labels=False, batch_size=4, size=SIZE,
                                      world_size=1, rank=0)
        labels = [label for _, batch in loader for label in batch.tolist()]
        self.assertEqual(labels, [-1] * len(self.items))
        with self.assertRaises(ValueError):
            stoker.Loader.images(self.root, labels=False)


if __name__ == "__main__":
    unittest.main()
