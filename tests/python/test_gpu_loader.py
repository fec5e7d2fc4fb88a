"""Loader(to_device='cuda') on a real GPU (label gpu; skipped without one): the data on the
device is the host batch bit for bit over a whole epoch, the next batch's copy runs while a
kernel runs on the loop's stream, H2D from the loader's pinned slots is at least 90 % of a
plain pinned tensor.to(non_blocking=True) of the same bytes, and the caller's current device
and stream are left alone. Figures are printed as "[ figures  ]" lines (scripts/gpu-check.sh)."""
import unittest

import numpy as np
try:
    import torch
except ImportError:  # a Python without torch (gpu-check may pick any): every test skips
    torch = None

import stoker
from stoker._device import torch_pinner
from testdata import make_records, TempDirCase

RECORD = 1 << 20  # 1 MiB records, 32 MiB batches: long enough copies to time
COUNT = 320
BATCH = 32
HAS_CUDA = torch is not None and torch.cuda.is_available()
NO_CUDA = "no CUDA device" + ("" if torch else " (no torch in this Python)")


def figures(text):
    print(f"[ figures  ] {text}", flush=True)


@unittest.skipUnless(HAS_CUDA, NO_CUDA)
class GpuLoader(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.path, cls.labels_path, cls.records = make_records(cls.tmp.path, COUNT, RECORD,
                                                              seed=9, label_step=7)
        cls.device = torch.device("cuda", torch.cuda.device_count() - 1)

    @classmethod
    def tearDownClass(cls):
        del cls.records

    def loader(self, **kw):
        kw.setdefault("to_device", self.device)
        return stoker.Loader.records(self.path, record_bytes=RECORD, batch_size=BATCH,
                                     labels_path=self.labels_path, world_size=1, rank=0,
                                     seed=3, **kw)

    def assert_pinned(self, loader):
        self.assertFalse([n for n in loader.stats()["notes"] if "page-locked" in n],
                         loader.stats()["notes"])

    def test_epoch_on_the_device_bit_for_bit(self):
        loader = self.loader(return_indices=True)
        self.assert_pinned(loader)
        seen = []
        for data, labels, indices in loader:
            self.assertEqual(data.device, self.device)
            self.assertEqual(labels.device, self.device)
            self.assertEqual(indices.device.type, "cpu")
            idx = indices.numpy()
            seen.extend(idx.tolist())
            self.assertTrue(np.array_equal(data.cpu().numpy(), self.records[idx]))
            self.assertTrue(np.array_equal(labels.cpu().numpy(), idx * 7))
        self.assertEqual(sorted(seen), list(range(COUNT)))
        self.assertEqual(loader.stats()["device"]["batches"], len(loader))
        loader.close()

    def test_the_slots_are_pinned_through_torch(self):
        # The host path with torch's pinner: the batches' own memory is page-locked.
        loader = self.loader(to_device=None, _pinner=torch_pinner(self.device)[:2])
        data, labels = next(iter(loader))
        self.assertTrue(data.is_pinned() and labels.is_pinned())
        del data, labels
        loader.close()

    def test_the_next_copy_overlaps_a_kernel_on_the_loops_stream(self):
        torch.cuda.set_device(self.device)  # the kernels and events on the batches' GPU
        cycles = self.sleep_cycles(seconds=0.02)  # each step: 20 ms of "compute"
        loader = self.loader()
        steps = []
        for data, _ in loader:
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            torch.cuda._sleep(cycles)
            end.record()
            steps.append((start, end))
        torch.cuda.synchronize(self.device)
        copies = list(loader._copies.recent)[2:]  # the first two ran before any kernel
        ref = steps[0][0]
        kernels = [(ref.elapsed_time(s), ref.elapsed_time(e)) for s, e in steps]
        total = hidden = 0.0
        for s, e in copies:
            c0, c1 = ref.elapsed_time(s), ref.elapsed_time(e)
            total += c1 - c0
            hidden += sum(max(0.0, min(c1, k1) - max(c0, k0)) for k0, k1 in kernels)
        figures(f"python copy/kernel overlap: {hidden / total:.0%} of {len(copies)} copies' "
                f"{total:.1f} ms ran under a kernel")
        self.assertGreater(total, 0.0)
        self.assertGreaterEqual(hidden / total, 0.5)
        loader.close()

    def test_h2d_from_the_loader_is_at_least_90_percent_of_a_plain_pinned_copy(self):
        loader = self.loader()
        self.assert_pinned(loader)
        for _ in range(2):  # the second epoch: the caching allocator is warm
            for _batch in loader:
                pass
        dev = loader.stats()["device"]
        ours = dev["bytes"] / dev["copy_seconds"] / 1e9
        plain = self.plain_pinned_rate(BATCH * RECORD, len(loader))
        figures(f"python H2D: stoker.Loader {ours:.1f} GB/s, plain pinned "
                f"tensor.to(non_blocking=True) {plain:.1f} GB/s ({ours / plain:.0%})")
        self.assertGreaterEqual(ours, 0.9 * plain)
        loader.close()

    def test_the_callers_device_and_stream_are_left_alone(self):
        # Current device 0, batches to the last GPU: another device where there are two.
        torch.cuda.set_device(0)
        stream = torch.cuda.Stream(self.device)  # the loop's own stream on the target
        loader = self.loader()
        with torch.cuda.stream(stream):
            inside = torch.cuda.current_device()  # whatever torch's stream context made it
            for data, _ in loader:
                self.assertEqual(torch.cuda.current_device(), inside)
                self.assertEqual(torch.cuda.current_stream(self.device), stream)
                data.float().sum()  # work on the loop's stream, as a step would
        self.assertEqual(torch.cuda.current_device(), 0)
        for data, _ in loader:
            self.assertEqual(torch.cuda.current_device(), 0)
        self.assertEqual(torch.cuda.current_device(), 0)
        loader.close()

    def test_state_dict_mid_epoch_resumes_exactly_once(self):
        loader = self.loader(return_indices=True)
        it = iter(loader)
        first = [next(it)[2] for _ in range(3)]
        state = loader.state_dict()
        it.close()
        loader.close()
        resumed = self.loader(return_indices=True)
        resumed.load_state_dict(state)
        rest = [indices for _, _, indices in resumed]
        resumed.close()
        seen = np.concatenate([i.numpy() for i in first + rest])
        self.assertEqual(sorted(seen.tolist()), list(range(COUNT)))

    def test_as_numpy_is_refused_with_to_device(self):
        with self.assertRaisesRegex(ValueError, "as_numpy"):
            self.loader(as_numpy=True)

    # ---- helpers ------------------------------------------------------------------------
    def sleep_cycles(self, seconds):
        """torch.cuda._sleep's cycles for about `seconds` on this GPU."""
        start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
        start.record()
        torch.cuda._sleep(1_000_000)
        end.record()
        end.synchronize()
        return int(1_000_000 * seconds * 1e3 / start.elapsed_time(end))

    def plain_pinned_rate(self, nbytes, times):
        torch.cuda.set_device(self.device)  # the events on the copies' stream
        host = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        rates = []
        for _ in range(2):  # the first round warms up
            total = 0.0
            for _ in range(times):
                dst = torch.empty(nbytes, dtype=torch.uint8, device=self.device)
                start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
                start.record()
                dst.copy_(host, non_blocking=True)
                end.record()
                end.synchronize()
                total += start.elapsed_time(end) / 1e3
            rates.append(nbytes * times / total / 1e9)
        return rates[-1]


if __name__ == "__main__":
    unittest.main()
