"""Loader(to_device=...)'s bookkeeping (stoker/_device.py: DeviceCopies) against the real C++
loader, on a machine without CUDA: which slots the copies in flight hold, when they go
back, and what state_dict() says while a batch is taken ahead of the loop.

CUDA itself is not here: HostSide below stands in for _device.CudaSide. Its "copies" are
CPU clones that count as finished only once waited for (event.synchronize()), the worst
case for the slots they hold. What it checks is the accounting, not the GPU path (that is
test_gpu_loader.py, label gpu)."""
import gc
import unittest

import numpy as np

import stoker
from stoker._device import DeviceCopies
from testdata import make_records, NoLeftovers, TempDir

RECORD = 32
COUNT = 120
BATCH = 8


class _Pending:
    def __init__(self, out, side):
        self.out, self.side, self.start, self.end = out, side, None, None

    def done(self):
        return False  # never by itself: DeviceCopies must wait (the slowest GPU)

    def wait(self):
        self.side.waited += 1

    def seconds(self):
        return 0.0


class HostSide:
    """Stands in for CudaSide (see the module's docstring); counts the copies in flight."""

    def __init__(self, copies_of):
        self.copies_of = copies_of  # () -> the DeviceCopies, to look at its queue
        self.copied = self.waited = self.most_held_when_asked = 0

    def copy(self, tensors):
        self.copied += 1
        # The copies still pending held their slots when the loader was asked for this one.
        held = len(self.copies_of()._pending)
        self.most_held_when_asked = max(self.most_held_when_asked, held)
        return _Pending([t.clone() for t in tensors], self)

    def hand_over(self, copy):
        return copy.out


def with_stand_in(loader, limit):
    """The loader as to_device would make it, HostSide in place of the CUDA stream."""
    side = HostSide(lambda: loader._copies)
    loader._copies = DeviceCopies(side, limit)
    return side


class DeviceCopiesOnTheRealLoader(NoLeftovers, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        cls.path, cls.labels_path, cls.records = make_records(cls.tmp.path, COUNT, RECORD,
                                                              seed=5, label_step=3)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def loader(self, **kw):
        # The fewest slots the loader can have: depth 1, no growth, so that any slot held
        # too many shows at once (slots = 1 + held_batches).
        kw.setdefault("held_batches", 2)
        return stoker.Loader.records(self.path, record_bytes=RECORD, batch_size=BATCH,
                                     labels_path=self.labels_path, world_size=1, rank=0,
                                     prefetch=1, max_depth=1, adaptive=False, workers=1,
                                     return_indices=True, seed=11, **kw)

    def check(self, batches, expected=range(COUNT)):
        seen = np.concatenate([i.numpy() for _, _, i in batches]) if batches else []
        self.assertEqual(sorted(list(seen)), sorted(expected))
        for data, labels, indices in batches:
            np.testing.assert_array_equal(data.numpy(), self.records[indices.numpy()])
            np.testing.assert_array_equal(labels.numpy(), indices.numpy() * 3)

    def test_copies_in_flight_hold_held_batches_slots_when_the_loader_is_asked(self):
        # The loop keeps every batch (data, labels on the "device", indices on the host):
        # none of them may hold a slot, or the consumer would hold them all and the C++
        # loader would raise "holds all N batch slots". The copies in flight hold up to
        # held_batches slots beyond the one being taken, and use them all (with one fewer,
        # held_batches=1 had no copy in flight while the loader was asked).
        for held in (1, 2, 3):
            with self.subTest(held_batches=held):
                loader = self.loader(held_batches=held)
                side = with_stand_in(loader, held)
                batches = list(loader)
                self.check(batches)
                self.assertEqual(side.copied, len(loader))
                self.assertEqual(side.waited, len(loader), "every copy waited for")
                self.assertEqual(side.most_held_when_asked, held)
                self.assertEqual(loader._copies._pending, type(loader._copies._pending)())
                self.assertEqual(loader.stats()["device"]["batches"], len(loader))
                loader.close()

    def test_the_limit_is_what_keeps_the_loader_from_running_out_of_slots(self):
        # The control: copies that never finish, and no limit: the consumer ends up holding
        # every slot and the C++ loader says so (rather than hanging).
        loader = self.loader(held_batches=1)
        with_stand_in(loader, limit=1000)
        with self.assertRaisesRegex(stoker.Error, "holds all 2 batch slots"):
            list(loader)
        loader.close()

    def test_state_dict_counts_the_batch_taken_ahead_as_not_taken(self):
        host = self.loader()
        device = self.loader()
        with_stand_in(device, 2)
        for loader in (host, device):
            it = iter(loader)
            first = [tuple(t.clone() for t in next(it)) for _ in range(5)]  # no slot kept
            state = loader.state_dict()
            it.close()
            loader.close()
            resumed = self.loader()
            resumed.load_state_dict(state)
            rest = [tuple(t.clone() for t in b) for b in resumed]
            resumed.close()
            self.check(first + rest)  # every sample once: none skipped, none twice
            if loader is host:
                host_state = state
        self.assertEqual(state, host_state)

    def test_break_and_close_wait_for_the_copies_in_flight(self):
        loader = self.loader()
        side = with_stand_in(loader, 2)
        for n, _ in enumerate(loader):
            if n == 3:
                break
        del _
        gc.collect()
        self.assertEqual(side.waited, side.copied)  # 5 copied (one ahead), all waited for
        self.assertEqual(len(loader._copies._pending), 0)
        it = iter(loader)  # a new loop works, and close() in the middle of it
        next(it)
        self.assertGreater(len(loader._copies._pending), 0)
        loader.close()
        self.assertEqual(len(loader._copies._pending), 0)
        self.assertEqual(side.waited, side.copied)
        it.close()

    def test_a_replaced_loop_leaves_the_accounting_whole(self):
        loader = self.loader()
        side = with_stand_in(loader, 2)
        old = iter(loader)
        next(old)
        loader.set_epoch(1)
        self.check(list(loader))  # the new loop, while the old one holds its copies
        with self.assertRaisesRegex(stoker.Error, "replaced"):
            next(old)
        self.assertEqual(side.waited, side.copied)
        loader.close()

    def test_to_device_and_as_numpy_together_are_refused(self):
        # Checked after the device: on this machine the device is the first complaint.
        with self.assertRaisesRegex(ValueError, "to_device"):
            self.loader(to_device="cuda", as_numpy=True)


if __name__ == "__main__":
    unittest.main()
