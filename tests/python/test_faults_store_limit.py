"""One listing of an image folder per job over torch.distributed's store, when the listing is
larger than a store value may be. PyPI's torch (2.4 on) runs the store's libuv server, which
refuses a value over 8 MiB and closes the client's connection (the process group's own); a
million UUID-named files compress to about 29 MiB. stoker sends the listing in pieces of at
most 4 MiB. Debian's torch has no libuv server (its store takes 40 MiB), so the rule is
enforced by a wrapper in the ranks (store_limit_job.py), scaled down: a 48 KiB limit and
24 KiB pieces, over a folder whose listing compresses to about 120 KiB. Before the pieces,
rank 0 raised the store's network error and rank 1 waited for STOKER_AGREE_TIMEOUT."""
import json
import os
import subprocess
import sys
import time
import unittest
import hashlib
import uuid

from testdata import TempDirCase, free_port, make_image_folder

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "store_limit_job.py")
LIMIT, PIECE = 48 << 10, 24 << 10


def uuid_folder(root, files):
    """An image folder of `files` UUID-named links to one small JPEG, in two classes: names
    that compress as badly as a real dataset's hashed names."""
    make_image_folder(root, classes=2, per_class=1)
    for cls in sorted(os.listdir(root)):
        folder = os.path.join(root, cls)
        first = os.path.join(folder, sorted(os.listdir(folder))[0])
        for i in range(files // 2):
            name = uuid.UUID(bytes=hashlib.md5(f"{cls}/{i}".encode()).digest())
            os.link(first, os.path.join(folder, f"{name}.jpg"))
    return files + 2


def two_ranks(root, limit, piece, timeout=120):
    port = free_port()
    env = dict(os.environ, STOKER_AGREE_TIMEOUT="40", STOKER_AGREE_WARN="5")
    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, JOB, root, str(port), str(r), str(limit),
                               str(piece)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in (0, 1)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        lines = [line for line in stdout.splitlines() if line.startswith("{")]
        out.append(json.loads(lines[-1]) if lines else {"error": stderr[-2000:]})
    return out, time.monotonic() - start


class StoreLimit(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.root = os.path.join(cls.tmp.path, "uuids")
        cls.size = uuid_folder(cls.root, 6000)

    def test_a_listing_over_the_stores_limit_reaches_every_rank_in_pieces(self):
        ranks, seconds = two_ranks(self.root, LIMIT, PIECE)
        for r in ranks:
            self.assertNotIn("error", r, ranks)
            self.assertEqual(r["size"], self.size)
        # Rank 1 took rank 0's listing: it did not wait for the agreement's timeout.
        self.assertLess(max(r["seconds"] for r in ranks), 30, ranks)

    def test_the_real_store_takes_the_pieces(self):
        ranks, _ = two_ranks(self.root, 0, PIECE)
        self.assertEqual([r.get("size") for r in ranks], [self.size, self.size], ranks)


if __name__ == "__main__":
    unittest.main()
