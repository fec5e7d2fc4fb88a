"""Loader(to_device=...)'s copies on a simulated device (sim_device.py: copies that complete
late and read their host slot when they complete, as DMA does), against the real C++ loader,
without CUDA: no slot goes back to the loader while its copy still reads it, and
held_batches=1 keeps a copy in flight while the loader is asked for the next batch (it used
to wait for every copy first, so copies never overlapped the loader), also when a copy fails
half way. The same on a GPU is test_gpu_loader.py."""
import unittest

import numpy as np

import stoker
from stoker._device import DeviceCopies
from sim_device import SimSide
from testdata import make_records, NoLeftovers, TempDir

RECORD = 256
COUNT = 160
BATCH = 8


class CopiesOnASimulatedDevice(NoLeftovers, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        cls.path, cls.labels_path, cls.records = make_records(cls.tmp.path, COUNT, RECORD,
                                                              seed=8, label_step=5)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def epoch(self, held):
        """One epoch as to_device runs it, SimSide in place of the CUDA stream; returns the
        batches (data, labels, indices) and the side."""
        loader = stoker.Loader.records(self.path, record_bytes=RECORD, batch_size=BATCH,
                                       labels_path=self.labels_path, world_size=1, rank=0,
                                       prefetch=2, workers=2, held_batches=held,
                                       return_indices=True, seed=4)
        side = SimSide()
        self.addCleanup(side.close)
        loader._copies = DeviceCopies(side, held)
        batches = list(loader)  # the loop keeps every batch: none may hold a slot
        self.assertEqual(loader._copies.stats()["in_flight"], 0, "every copy waited for")
        loader.close()
        return batches, side

    def test_no_slot_is_refilled_while_its_copy_reads_it(self):
        for held in (1, 2):
            with self.subTest(held_batches=held):
                batches, _ = self.epoch(held)
                seen = np.concatenate([i.numpy() for _, _, i in batches])
                self.assertEqual(sorted(seen.tolist()), list(range(COUNT)))
                for data, labels, indices in batches:
                    np.testing.assert_array_equal(data.numpy(), self.records[indices.numpy()])
                    np.testing.assert_array_equal(labels.numpy(), indices.numpy() * 5)

    def test_held_batches_1_keeps_a_copy_in_flight_while_the_loader_is_asked(self):
        # The copy of batch n runs while the loader is asked for batch n+1: one slot held
        # beyond the one just taken, which is what held_batches=1 allows.
        _, side = self.epoch(1)
        asks = side.in_flight_when_asked[1:]  # the first ask has no copy before it
        overlapped = sum(1 for n in asks if n > 0)
        self.assertGreaterEqual(overlapped, len(asks) // 2,
                                f"a copy was in flight at {overlapped} of {len(asks)} asks")
        self.assertLessEqual(max(asks), 1, "never more than held_batches copies in flight")


class ACopyThatFailsHalfWay(NoLeftovers, unittest.TestCase):
    def test_the_slot_is_not_given_back_while_its_queued_copy_reads_it(self):
        # The batch's data copy is queued, its labels' copy fails: the views of the slot die
        # with the exception, and the loader's workers refill the slot (the 0xFF below). The
        # data copy queued before must have read the slot first.
        side = SimSide(copy_time=0.05, fail_after=1)
        self.addCleanup(side.close)
        copies = DeviceCopies(side, 2)
        data = np.arange(4096, dtype=np.uint8).reshape(8, 512)
        labels = np.arange(8, dtype=np.int64)
        with self.assertRaisesRegex(RuntimeError, "simulated"):
            copies.queue((data, labels, labels.copy(), 0, 0))
        expected = data.copy()
        data[:] = 0xFF  # the slot refilled
        side.synchronize()
        np.testing.assert_array_equal(side._all[0].out[0].numpy(), expected)
        self.assertEqual(copies.stats()["in_flight"], 0)


if __name__ == "__main__":
    unittest.main()
