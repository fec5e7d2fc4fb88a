"""Batches handed over without copying, and the loader's life from Python: early break,
del + gc (no leaked threads or memory, no hang), tensors outliving the loader, a consumer
holding too many batches (an error, not a hang), the GIL released while waiting."""
import gc
import os
import sys
import threading
import time
import unittest

import numpy as np
import torch

import stoker
from testdata import make_slow_images, make_tokens, rss_bytes, TempDirCase, thread_count

SEQ = 16


class Lifecycle(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.path = os.path.join(cls.tmp.path, "tokens.bin")
        cls.tokens = make_tokens(cls.path, 400 * SEQ + 1)

    def loader(self, **kw):
        kw.setdefault("world_size", 1)
        kw.setdefault("rank", 0)
        return stoker.Loader.tokens(self.path, seq_len=SEQ, batch_size=8, **kw)

    def test_zero_copy_views_of_recycled_slots(self):
        loader = self.loader()
        pointers = set()
        for _ in range(3):
            for data, labels in loader:
                pointers.add(data.data_ptr())
                self.assertTrue(data.is_contiguous())
        # 150 batches went through a handful of slots: the tensors are the slots' memory.
        self.assertLessEqual(len(pointers), loader.stats()["slots"])
        self.assertLess(len(pointers), 50)

    def test_early_break_del_and_gc_leak_nothing(self):
        def run():
            loader = self.loader(workers=1)
            for n, (data, _) in enumerate(loader):
                if n == 5:
                    break
            for n, (data, _) in enumerate(loader):  # a new loop after the break
                if n == 2:
                    break
            del loader, data
            gc.collect()

        for _ in range(3):  # warm up allocators and the hwloc topology cache
            run()
        threads, rss = thread_count(), rss_bytes()
        start = time.monotonic()
        for _ in range(30):
            run()
        self.assertLess(time.monotonic() - start, 30, "loader teardown is slow or hangs")
        self.assertEqual(thread_count(), threads, "worker threads outlived their loader")
        self.assertLess(rss_bytes() - rss, 16 << 20, "memory grows with each loader")

    def test_tensor_outlives_the_loader(self):
        loader = self.loader(return_indices=True, shuffle=False)
        data, _, indices = next(iter(loader))
        expected = [self.tokens[i * SEQ:(i + 1) * SEQ + 1].astype(np.int64)
                    for i in indices.tolist()]
        loader.close()
        del loader
        gc.collect()
        for row, want in zip(data.numpy(), expected):
            np.testing.assert_array_equal(row, want)

    def test_holding_every_slot_is_an_error_not_a_hang(self):
        loader = self.loader(held_batches=1, prefetch=2, adaptive=False, max_depth=2)
        held = []
        with self.assertRaises(stoker.Error):
            for batch in loader:
                held.append(batch)  # never released
                self.assertLess(len(held), 100)
        del held
        # After letting go, the loader works again.
        self.assertGreater(sum(1 for _ in loader), 0)

    def test_gil_released_while_waiting(self):
        # While the consumer is inside next() for a slow batch (one worker decoding large
        # JPEGs, ~2 s here), another Python thread keeps running Python: inside next() its
        # longest pause is far below the wait, and the wait is far above a GIL switch
        # interval. Had next() held the GIL, that thread would stop for the whole wait (one
        # pause as long as the wait, or no run at all). Load slows the batch and the thread
        # alike, so nothing here depends on the machine's speed.
        slow = os.path.join(self.tmp.path, "slow")
        options, _ = make_slow_images(slow, seconds=2.0)
        loader = stoker.Loader.images(slow, **options)
        inside, stop = threading.Event(), threading.Event()
        seen = {"runs": 0, "pause": 0.0}

        def run_python():
            before = time.monotonic()
            while not stop.is_set():
                now = time.monotonic()
                if inside.is_set():
                    seen["runs"] += 1
                    seen["pause"] = max(seen["pause"], now - before)
                before = now

        thread = threading.Thread(target=run_python)
        thread.start()
        it = iter(loader)
        entered = time.monotonic()
        inside.set()
        next(it)
        inside.clear()
        waited = time.monotonic() - entered
        stop.set()
        thread.join()
        del it
        loader.close()
        self.assertGreater(waited, 50 * sys.getswitchinterval(),
                           "the batch came too fast: the test proves nothing")
        self.assertGreater(seen["runs"], 0, "no Python ran while next() waited")
        self.assertLess(seen["pause"], waited / 2, (seen, waited))

    def test_to_device_without_cuda_is_a_value_error(self):
        if torch.cuda.is_available():
            self.skipTest("this machine has a CUDA device")
        with self.assertRaises(ValueError) as ctx:
            self.loader(to_device="cuda")
        self.assertIn("to_device", str(ctx.exception))
        self.assertEqual(next(iter(self.loader(to_device="cpu")))[0].device.type, "cpu")


if __name__ == "__main__":
    unittest.main()
