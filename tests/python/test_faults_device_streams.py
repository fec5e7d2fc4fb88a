"""Loader(to_device=...)'s CUDA side (stoker._device.CudaSide itself, and _current) on a
simulated torch.cuda (sim_device.SimTorch): streams that run later than the host, copies
that read their host slot when they complete, torch's caching allocator, record_stream, and
a current device per thread with primary contexts. Without CUDA.

The loop reads each batch on its current stream with a kernel that runs late and drops the
batch on the host at once, as a training step does: the batch's device memory, allocated on
the loader's side stream, goes back to that stream's pool, where the next batch's copy would
take it while the kernel still reads it, unless hand_over() marked it used on the loop's
stream (record_stream)."""
import threading
import unittest
from unittest import mock

import numpy as np
import torch

import stoker
from stoker._device import CudaSide, DeviceCopies, _current
from sim_device import SimTensor, SimTorch
from testdata import make_records, NoLeftovers, TempDir

RECORD = 256
COUNT = 96
BATCH = 8
KERNEL = 0.05  # seconds, far longer than a copy or a loop step: the loop runs ahead


class CudaSideOnASimulatedGpu(NoLeftovers, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = TempDir()
        cls.path, cls.labels_path, cls.records = make_records(cls.tmp.path, COUNT, RECORD,
                                                              seed=3, label_step=5)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def epoch(self, wait_each_step=False):
        """One epoch with to_device's CudaSide on SimTorch; each batch read by a late kernel
        on the loop's stream (waited for at each step, or not). Returns what the kernels read
        and the simulation."""
        sim = SimTorch()
        self.addCleanup(sim.close)
        loader = stoker.Loader.records(self.path, record_bytes=RECORD, batch_size=BATCH,
                                       labels_path=self.labels_path, world_size=1, rank=0,
                                       prefetch=2, workers=2, held_batches=2,
                                       return_indices=True, seed=4)
        loader._copies = DeviceCopies(CudaSide(torch.device("cuda", 0), torch=sim), 2)
        loop_stream = sim.cuda.current_stream()
        read = []
        for data, labels, indices in loader:
            read_data, read_labels = data.reader(), labels.reader()
            loop_stream.launch(KERNEL, lambda i=indices, d=read_data, l=read_labels:
                               read.append((i, d(), l())))
            if wait_each_step:
                loop_stream.synchronize()
        loop_stream.synchronize()
        loader.close()
        return read, sim

    def wrong_batches(self, read):
        self.assertEqual(sorted(np.concatenate([i.numpy() for i, _, _ in read]).tolist()),
                         list(range(COUNT)))
        return sum(1 for i, data, labels in read
                   if not np.array_equal(data.numpy(), self.records[i.numpy()])
                   or not np.array_equal(labels.numpy(), i.numpy() * 5))

    def test_a_batch_is_not_reused_by_the_next_copy_while_the_loops_stream_reads_it(self):
        read, sim = self.epoch()
        self.assertEqual(self.wrong_batches(read), 0,
                         "a batch was overwritten while the loop's kernel read it")
        self.assertGreater(sim.blocks_made, 2 * 3, "more blocks than the copies in flight")

    def test_a_batch_whose_reads_are_done_gives_its_memory_to_the_next_copies(self):
        # record_stream delays the reuse, it does not prevent it: a loop that waits for its
        # kernels lets the allocator reuse each batch's blocks.
        read, sim = self.epoch(wait_each_step=True)
        self.assertEqual(self.wrong_batches(read), 0)
        self.assertLessEqual(sim.blocks_made, 2 * 4, "data and labels of at most 4 batches")

    def test_without_record_stream_the_next_copy_overwrites_a_batch_being_read(self):
        # The control: the simulation shows the fault when hand_over() marks nothing.
        with mock.patch.object(SimTensor, "record_stream", lambda self, stream: None):
            read, _ = self.epoch()
        self.assertGreater(self.wrong_batches(read), 0)


class CurrentDeviceOnASimulatedGpu(unittest.TestCase):
    """_current(): the pinner's device switch (torch_pinner) leaves the caller's device."""

    def sim(self, cuda_version):
        sim = SimTorch(cuda_version)
        self.addCleanup(sim.close)
        return sim

    def test_under_cuda_11_a_device_chosen_but_not_used_yet_is_restored(self):
        # torch built for CUDA 11.8 (it runs on an H200): set_device makes no context, and
        # the switch back was skipped for a device without one.
        sim = self.sim("11.8")
        sim.cuda.set_device(1)
        with _current(sim, torch.device("cuda", 0)):
            sim.use()
        self.assertEqual(sim.cuda.current_device(), 1, "the caller's choice was lost")
        self.assertNotIn(1, sim.contexts)

    def test_a_thread_that_never_chose_a_device_gets_no_context_on_gpu_0(self):
        for version, stays_on in (("12.4", 1), ("11.8", 0)):
            sim = self.sim(version)
            now = []

            def unpin_on_a_worker():
                with _current(sim, torch.device("cuda", 1)):
                    sim.use()
                now.append(sim.cuda.current_device())
            thread = threading.Thread(target=unpin_on_a_worker)
            thread.start()
            thread.join()
            self.assertNotIn(0, sim.contexts, version)
            self.assertEqual(now, [stays_on], version)

    def test_a_device_in_use_is_restored(self):
        for version in ("12.4", "11.8"):
            sim = self.sim(version)
            sim.cuda.set_device(1)
            sim.use()
            with _current(sim, torch.device("cuda", 0)):
                self.assertEqual(sim.cuda.current_device(), 0)
            self.assertEqual(sim.cuda.current_device(), 1, version)


if __name__ == "__main__":
    unittest.main()
