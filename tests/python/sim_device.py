"""A simulated device for Loader(to_device=...) (tests only, never shipped), as two stand-ins:
SimTorch (below) for the torch module that stoker._device.CudaSide drives, and SimSide for
CudaSide itself, given to stoker._device.DeviceCopies. SimSide behaves as a copy engine does
where it matters to the slots:
  - copies complete later, one after another, on the side's own thread (one stream);
  - a copy reads its source when it completes, through the address it was given, as DMA does:
    it keeps no reference to the host tensors, so a slot that went back to the loader and was
    refilled before then lands on the "device" as the refilled bytes.
It also notes, at each copy (right after the loader was asked for that batch's slot), how many
earlier copies were still in flight: the overlap of copies with the loader that
held_batches buys."""
import collections
import contextlib
import ctypes
import threading
import time
import types

import numpy as np
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


# ---- torch.cuda on a simulated GPU, for stoker._device.CudaSide itself.
#
# SimTorch stands in for the `torch` module CudaSide is given (CudaSide(device, torch=...)):
# streams run their work in order on their own threads, later than it was queued, and
# non-blocking (torch's streams are not ordered with the default stream); events are
# generations, as CUDA's; a copy_(non_blocking=True) reads its host source when it
# completes. Device memory comes from a caching allocator that behaves as torch's where it
# matters to a batch handed to another stream:
#   - a block freed on the host (its last tensor dropped) goes back to the pool of the
#     stream it was allocated on, and the next allocation of its size on that stream takes
#     it at once, even while another stream's kernels still read it, which is safe for the
#     allocating stream only;
#   - unless record_stream(s) marked it used on s: then it is reused only once the work
#     queued on s when it was freed has run (torch records an event there at the free).
# It also keeps the current device of each thread and the primary contexts, as torch's CUDA
# runtime does: set_device makes the device's context under CUDA 12 and later (torch's
# builds for cu121 and later), nothing before (cu118); the first use of a device makes it.


class SimEvent:
    def __init__(self, sim, enable_timing=False):
        self._sim = sim
        self._recorded = self._completed = 0
        self._when = None

    def record(self, stream=None):
        stream = stream or self._sim.cuda.current_stream()
        with self._sim.cv:
            self._recorded += 1
            gen = self._recorded
        stream.enqueue(lambda: self._complete(gen))

    def _complete(self, gen):
        with self._sim.cv:
            self._completed = max(self._completed, gen)
            self._when = time.monotonic()
            self._sim.cv.notify_all()

    def query(self):
        with self._sim.cv:
            return self._completed >= self._recorded

    def synchronize(self):
        with self._sim.cv:
            gen = self._recorded
            self._sim.cv.wait_for(lambda: self._completed >= gen)

    def _wait_for(self, gen):  # a stream's wait: blocks the stream's thread
        with self._sim.cv:
            self._sim.cv.wait_for(lambda: self._completed >= gen)

    def elapsed_time(self, end):
        return (end._when - self._when) * 1e3


class SimStream:
    """One stream: a thread that runs its work in order."""

    def __init__(self, sim, name):
        self._sim = sim
        self._work = collections.deque()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name)
        self._thread.start()

    def enqueue(self, fn):
        with self._sim.cv:
            self._work.append(fn)
            self._sim.cv.notify_all()

    def wait_event(self, event):
        with self._sim.cv:
            gen = event._recorded  # the record in place now
        self.enqueue(lambda: event._wait_for(gen))

    def launch(self, seconds, body=None):
        """A kernel of the test's: runs `seconds` after the work queued before, then `body`."""
        def kernel():
            time.sleep(seconds)
            if body:
                body()
        self.enqueue(kernel)

    def synchronize(self):
        done = SimEvent(self._sim)
        done.record(self)
        done.synchronize()

    def close(self):
        with self._sim.cv:
            self._closed = True
            self._sim.cv.notify_all()
        self._thread.join()

    def _run(self):
        while True:
            with self._sim.cv:
                self._sim.cv.wait_for(lambda: self._work or self._closed)
                if not self._work:
                    return
                fn = self._work[0]
            fn()
            with self._sim.cv:
                self._work.popleft()
                self._sim.cv.notify_all()


class _Block:
    def __init__(self, size, stream):
        self.memory = (ctypes.c_ubyte * size)()
        self.size, self.stream, self.uses = size, stream, set()


class SimTensor:
    """A device tensor of the caching allocator: its block returns to the pool when the
    tensor is dropped, as the block of a torch tensor does when its storage dies."""

    def __init__(self, sim, block, shape, dtype):
        self._sim, self._block, self.shape, self.dtype = sim, block, tuple(shape), dtype

    @property
    def address(self):
        return ctypes.addressof(self._block.memory)

    def copy_(self, src, non_blocking=False):
        # Addresses only, as the DMA has: neither tensor is kept alive by the queued copy.
        dst, address, size = self.address, src.data_ptr(), src.numel() * src.element_size()
        self._sim.cuda.current_stream().enqueue(lambda: ctypes.memmove(dst, address, size))
        return self

    def record_stream(self, stream):
        if stream is not self._block.stream:
            self._block.uses.add(stream)

    def reader(self):
        """A kernel's read of the tensor: a function that returns its values as the device
        holds them when it is called, holding the address only, not the tensor (a kernel
        keeps no tensor alive either)."""
        address, shape, dtype = self.address, self.shape, self.dtype

        def read():
            host = torch.empty(shape, dtype=dtype)
            ctypes.memmove(host.data_ptr(), address, host.numel() * host.element_size())
            return host
        return read

    def __del__(self):
        self._sim.free(self._block)


class _SimCuda:
    """The torch.cuda functions CudaSide and _device._current call."""

    def __init__(self, sim):
        self._sim = sim
        self.Event = lambda enable_timing=False: SimEvent(sim, enable_timing)
        self.Stream = lambda device=None: sim.new_stream("sim-side-stream")

    def current_stream(self, device=None):
        return getattr(self._sim.local, "stream", None) or self._sim.default_stream

    @contextlib.contextmanager
    def stream(self, stream):
        previous = getattr(self._sim.local, "stream", None)
        self._sim.local.stream = stream
        try:
            yield
        finally:
            self._sim.local.stream = previous

    @contextlib.contextmanager
    def device(self, device):  # as torch 2.1's: switches back without making a context
        previous = self.current_device()
        self._sim.local.device = device.index
        try:
            yield
        finally:
            self._sim.local.device = previous

    def current_device(self):
        return getattr(self._sim.local, "device", 0)

    def set_device(self, device):
        index = device if isinstance(device, int) else device.index
        self._sim.set_devices.append(index)
        self._sim.local.device = index
        if self._sim.cuda12:
            self._sim.contexts.add(index)


class SimTorch:
    """Stands in for the torch module (see above). close() ends the streams' threads."""

    def __init__(self, cuda_version="12.4"):
        self.cv = threading.Condition()
        self.local = threading.local()
        self.cuda = _SimCuda(self)
        self.version = types.SimpleNamespace(cuda=cuda_version)
        self.cuda12 = int(cuda_version.split(".")[0]) >= 12
        self.contexts = set()  # devices with a primary context
        self.set_devices = []  # every set_device, in order
        self._C = types.SimpleNamespace(_cuda_hasPrimaryContext=lambda d: d in self.contexts)
        self._streams = []
        self._free = []  # blocks the next allocation on their stream may take
        self._pending = []  # (block, events): freed, reusable once the events completed
        self.blocks_made = 0
        self.default_stream = self.new_stream("sim-default-stream")

    def new_stream(self, name):
        stream = SimStream(self, name)
        self._streams.append(stream)
        return stream

    def use(self):
        """A kernel or an allocation on the thread's current device: its context is made."""
        self.contexts.add(self.cuda.current_device())

    def empty(self, shape, dtype, device=None):
        stream = self.cuda.current_stream()
        size = max(1, int(np.prod(shape)) * torch.empty(0, dtype=dtype).element_size())
        with self.cv:
            ready = [(b, es) for b, es in self._pending if all(e.query() for e in es)]
            for entry in ready:
                self._pending.remove(entry)
                self._free.append(entry[0])
            block = next((b for b in self._free if b.stream is stream and b.size == size), None)
            if block is not None:
                self._free.remove(block)
            else:
                block = _Block(size, stream)
                self.blocks_made += 1
        return SimTensor(self, block, shape, dtype)

    def free(self, block):
        events = []
        for stream in block.uses:
            event = SimEvent(self)
            event.record(stream)
            events.append(event)
        block.uses = set()
        with self.cv:
            if events:
                self._pending.append((block, events))
            else:
                self._free.append(block)

    def close(self):
        for stream in self._streams:
            stream.close()
