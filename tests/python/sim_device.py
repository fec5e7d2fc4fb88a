"""A simulated device side for stoker._device.DeviceCopies (tests only, never shipped): it stands
in for CudaSide, whose CUDA streams this machine does not have, and behaves as a copy engine
does where it matters to the slots:
  - copies complete later, one after another, on the side's own thread (one stream);
  - a copy reads its source when it completes, through the address it was given, as DMA does:
    it keeps no reference to the host tensors, so a slot that went back to the loader and was
    refilled before then lands on the "device" as the refilled bytes.
It also notes, at each copy (right after the loader was asked for that batch's slot), how many
earlier copies were still in flight: the overlap of copies with the loader that
held_batches buys."""
import collections
import ctypes
import threading
import time

import torch


class SimCopy:
    def __init__(self, out, sources):
        self.out = out  # DeviceCopies hands these to the loop (and then forgets them)
        self._targets = list(out)  # where the "DMA" writes, whoever owns them by then
        self._sources = sources  # (address, bytes) of each host tensor, no reference to it
        self._done = threading.Event()
        self._seconds = 0.0
        self.start = self.end = None  # CUDA events in CudaSide's copies; none here

    def done(self):
        return self._done.is_set()

    def wait(self):
        self._done.wait()

    def seconds(self):
        return self._seconds

    def _complete(self, copy_time):
        start = time.monotonic()
        time.sleep(copy_time)
        for dst, (address, size) in zip(self._targets, self._sources):
            ctypes.memmove(dst.data_ptr(), address, size)  # the source as it is now
        self._seconds = time.monotonic() - start
        self._done.set()


class SimSide:
    """CudaSide's interface (copy, hand_over) on the simulated stream. close() ends its thread."""

    def __init__(self, copy_time=0.004, fail_after=None):
        self.copy_time = copy_time
        self.fail_after = fail_after  # copy() raises after queuing this many of its copies
        self.in_flight_when_asked = []  # per copy: earlier copies not done yet
        self._queue = collections.deque()
        self._all = []
        self._cv = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="sim-copy-stream")
        self._thread.start()

    def copy(self, tensors):
        if self.fail_after is not None:  # as a CUDA error on the labels' copy would
            self._queue_copy(tensors[: self.fail_after])
            raise RuntimeError("CUDA error: out of memory (simulated, on the batch's second copy)")
        return self._queue_copy(tensors)

    def synchronize(self):
        for copy in list(self._all):
            copy.wait()

    def _queue_copy(self, tensors):
        out = [torch.empty_like(t) for t in tensors]
        copy = SimCopy(out, [(t.data_ptr(), t.numel() * t.element_size()) for t in tensors])
        with self._cv:
            self.in_flight_when_asked.append(sum(not c.done() for c in self._all))
            self._all.append(copy)
            self._queue.append(copy)
            self._cv.notify()
        return copy

    def hand_over(self, copy):
        return copy.out  # read only after the copy is done (the tests wait for it)

    def close(self):
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join()

    def _run(self):
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._queue or self._closed)
                if not self._queue:
                    return
                copy = self._queue.popleft()
            copy._complete(self.copy_time)
