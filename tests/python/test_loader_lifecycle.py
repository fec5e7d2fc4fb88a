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
from testdata import TempDir, make_image_folder, make_tokens, rss_bytes, thread_count

SEQ = 16


class Lifecycle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        cls.path = os.path.join(cls.tmp.path, "tokens.bin")
        cls.tokens = make_tokens(cls.path, 400 * SEQ + 1)
        cls.images = os.path.join(cls.tmp.path, "images")
        make_image_folder(cls.images, classes=2, per_class=8)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

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
        # One worker decoding images keeps the consumer waiting; a Python thread counting
        # meanwhile must keep most of its speed (it would stop dead if next() held the GIL).
        def count_for(seconds, stop_event=None):
            n, end = 0, time.monotonic() + seconds
            while time.monotonic() < end and not (stop_event and stop_event.is_set()):
                n += 1
            return n

        before = count_for(0.3) / 0.3
        # Big batches from one worker, and a short GIL switch interval, so the consumer gets
        # the GIL back at once after each batch and then really waits in next().
        loader = stoker.Loader.images(self.images, batch_size=8, size=256, workers=1,
                                      world_size=1, rank=0, dct_scaling=False)
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-4)
        self.addCleanup(sys.setswitchinterval, interval)
        stop, result = threading.Event(), {}
        counter = threading.Thread(target=lambda: result.update(n=count_for(30, stop)))
        start = time.monotonic()
        counter.start()
        for _ in range(3):
            for _batch in loader:
                pass
        stop.set()
        counter.join()
        elapsed = time.monotonic() - start
        alone = min(before, count_for(0.3) / 0.3)  # the machine may be shared: take the worse
        share = loader.stats()["wait_share"]
        rate = result["n"] / elapsed
        self.assertGreater(share, 0.3, "the consumer did not wait: the test proves nothing")
        # While the consumer waits the counter has the interpreter to itself.
        self.assertGreater(rate, 0.3 * alone * share, (rate, alone, share))

    def test_to_device_without_cuda_is_a_value_error(self):
        if torch.cuda.is_available():
            self.skipTest("this machine has a CUDA device")
        with self.assertRaises(ValueError) as ctx:
            self.loader(to_device="cuda")
        self.assertIn("to_device", str(ctx.exception))
        self.assertEqual(next(iter(self.loader(to_device="cpu")))[0].device.type, "cpu")


if __name__ == "__main__":
    unittest.main()
