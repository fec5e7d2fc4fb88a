"""Real files as WebDataset and PIL take them, through stoker.Loader (docs/reliability.md):

- a cut shard (.tar, .tar.gz, .tar.zst ending early) under on_corrupt='skip': the samples
  before the cut arrive, the rest of the shard is one named skip, the epoch goes on, and
  both ranks get the same number of batches; under 'error' the message names the shard
  and the byte where it ends (before: the loader failed when it was built);
- shards written by Python's tarfile in pax and GNU format, with long names and a hard
  link: every sample arrives (before: the hard-linked one was dropped without a word);
- streaming with a shuffle buffer larger than the dataset reads each shard once per epoch
  (before: about five times over before the first batch);
- a JPEG libjpeg only warns about is delivered and counted (before: a corrupt sample).
"""
import io
import os
import subprocess
import sys
import tarfile
import unittest

import numpy as np
from PIL import Image

import stoker
from testdata import make_image_folder, NoLeftovers, TempDirCase

SIZE = 16


def jpeg_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_shard(path, members, fmt=tarfile.USTAR_FORMAT):
    """members: (name, bytes) or (name, None, link_target) for a hard link."""
    with tarfile.open(path, "w", format=fmt) as tar:
        for member in members:
            info = tarfile.TarInfo(member[0])
            if member[1] is None:
                info.type = tarfile.LNKTYPE
                info.linkname = member[2]
                tar.addfile(info)
            else:
                info.size = len(member[1])
                tar.addfile(info, io.BytesIO(member[1]))


class Shards(NoLeftovers, TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.items = make_image_folder(os.path.join(cls.tmp.path, "images"), classes=2,
                                      per_class=6)
        os.environ["STOKER_CACHE_DIR"] = os.path.join(cls.tmp.path, "cache")

    @classmethod
    def tearDownClass(cls):
        del os.environ["STOKER_CACHE_DIR"]

    def samples(self, first, count):
        members = []
        for n in range(first, first + count):
            path, label = self.items[n % len(self.items)]
            members += [(f"s{n:04d}.jpg", jpeg_bytes(path)), (f"s{n:04d}.cls", str(label).encode())]
        return members

    def loader(self, shards, **kw):
        kw.setdefault("world_size", 1)
        kw.setdefault("rank", 0)
        return stoker.Loader.images(shards=shards, batch_size=4, size=SIZE, shuffle=False,
                                    train=False, return_indices=True, **kw)

    def cut_shards(self, ext, tag):
        """Three shards of 6 samples; the middle one cut inside its 4th image."""
        folder = os.path.join(self.tmp.path, "cut" + ext.replace(".", "-") + "-" + tag)
        os.makedirs(folder)
        for k in range(3):
            plain = os.path.join(folder, f"shard-{k}.tar")
            write_shard(plain, self.samples(6 * k, 6))
            with open(plain, "rb") as f:
                data = f.read()
            if k == 1:  # the cut lies inside sample 3's image: samples 0..2 are whole
                names = tarfile.open(plain).getmembers()
                data = data[:names[6].offset_data + 100]
            if ext == ".tar.gz":
                import gzip
                data = gzip.compress(data)
            if ext == ".tar.zst":
                data = subprocess.run(["zstd", "-q", "-c"], input=data, check=True,
                                      capture_output=True).stdout
            os.remove(plain)
            with open(plain.replace(".tar", ext), "wb") as f:
                f.write(data)
        return folder, os.path.join(folder, "shard-1" + ext)

    def test_a_cut_shard_is_one_named_skip_and_the_epoch_goes_on(self):
        for ext, stream in ((".tar", False), (".tar", True), (".tar.gz", None), (".tar.zst", None)):
            with self.subTest(ext=ext, stream=stream):
                folder, cut = self.cut_shards(ext, "stream" if stream else "random")
                loader = self.loader([folder], stream=stream, on_corrupt="skip",
                                     max_skip_fraction=0.5)
                self.assertEqual(len(loader), 4)  # 16 samples: 15 whole and the cut's rest
                for epoch in range(2):
                    loader.set_epoch(epoch)
                    seen = [i for _, _, idx in loader for i in idx.tolist()]
                    # 6 + 3 whole + 6; the cut's rest is dataset index 9.
                    self.assertEqual(seen, list(range(9)) + list(range(10, 16)))
                stats = loader.stats()
                self.assertEqual(stats["skipped"], 2)  # once per epoch
                self.assertEqual(len(stats["skipped_files"]), 1)
                self.assertTrue(stats["skipped_files"][0].startswith(cut + "@"), stats)
                # Both ranks of two get the same number of batches.
                counts = []
                for rank in range(2):
                    r = self.loader([folder], stream=stream, on_corrupt="skip",
                                    max_skip_fraction=0.5, world_size=2, rank=rank)
                    counts.append(sum(1 for _ in r))
                self.assertEqual(counts[0], counts[1])
                # Under 'error': the shard and the byte where its data ends.
                with self.assertRaises(stoker.Error) as ctx:
                    for _ in self.loader([folder], stream=stream):
                        pass
                self.assertIn(cut + "@", str(ctx.exception))
                self.assertIn("truncated tar shard", str(ctx.exception))

    def test_pax_and_gnu_shards_with_long_names_and_hard_links(self):
        folder = "a-folder-with-a-name-long-enough/" * 4  # every name passes 100 bytes
        members = [(folder + n, data) for n, data in self.samples(0, 3)]
        # Sample 3: its image a hard link to sample 0's, its label its own.
        members += [(folder + "s0003.jpg", None, folder + "s0000.jpg"),
                    (folder + "s0003.cls", str(self.items[0][1]).encode())]
        for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
            with self.subTest(fmt=fmt):
                shard = os.path.join(self.tmp.path, f"links-{fmt}.tar")
                write_shard(shard, members, fmt)
                for stream in (False, True):
                    loader = self.loader([shard], stream=stream, dtype="uint8")
                    data = np.concatenate([b[0].numpy() for b in loader])
                    self.assertEqual(len(data), 4)
                    np.testing.assert_array_equal(data[3], data[0])

    def test_a_stream_smaller_than_its_buffer_reads_each_shard_once_per_epoch(self):
        shard = os.path.join(self.tmp.path, "small.tar")
        write_shard(shard, self.samples(0, 12))
        loader = self.loader([shard], stream=True, shuffle_buffer=1000)
        for epoch in range(2):
            loader.set_epoch(epoch)
            self.assertEqual(sum(len(idx) for _, _, idx in loader), 12)
        read = loader.stats()["stream_reads"]["bytes"]
        self.assertGreaterEqual(read, 2 * os.path.getsize(shard))
        self.assertLessEqual(read, 2 * os.path.getsize(shard))

    def test_a_jpeg_libjpeg_only_warns_about_is_delivered_and_counted(self):
        root = os.path.join(self.tmp.path, "warned")
        os.makedirs(os.path.join(root, "c0"))
        data = jpeg_bytes(self.items[0][0])
        at = data.find(b"\xff\xdb")  # 3 extraneous bytes before the first DQT marker
        with open(os.path.join(root, "c0", "warned.jpg"), "wb") as f:
            f.write(data[:at] + b"\0\0\0" + data[at:])
        with open(os.path.join(root, "c0", "whole.jpg"), "wb") as f:
            f.write(data)
        loader = stoker.Loader.images(root, batch_size=2, size=SIZE, world_size=1, rank=0,
                                      shuffle=False, train=False, dtype="uint8")
        (batch, _), = list(loader)
        np.testing.assert_array_equal(batch[0].numpy(), batch[1].numpy())
        self.assertEqual(loader.stats()["decode_warnings"], 1)
        self.assertEqual(loader.stats()["skipped"], 0)
        self.assertEqual(np.asarray(Image.open(os.path.join(root, "c0", "warned.jpg"))).shape[2],
                         3)
        # Under --stoker-verbose the file is named once, whatever the epochs.
        script = ("import stoker\n"
                  f"loader = stoker.Loader.images({root!r}, batch_size=2, size={SIZE}, "
                  "world_size=1, rank=0, train=False)\n"
                  "for epoch in range(2):\n"
                  "    loader.set_epoch(epoch)\n"
                  "    list(loader)\n"
                  "print(loader.stats()['decode_warnings'])\n")
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             env=dict(os.environ, STOKER_VERBOSE="1"), timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "2")  # counted per delivery
        named = [line for line in run.stderr.splitlines() if "decoded with a warning" in line]
        self.assertEqual(len(named), 1, run.stderr)
        self.assertIn("warned.jpg", named[0])
        self.assertIn("extraneous bytes before marker 0xdb", named[0])


if __name__ == "__main__":
    unittest.main()
