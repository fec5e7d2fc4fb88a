"""Loader(to_device='cuda'): each batch goes from the loader's page-locked slot to the GPU on
a side stream, one batch ahead of the training loop, and its slot goes back to the loader
only once that copy has finished.

Per batch:
  1. copy: the slot's host tensors (views, no copy) are copied with non_blocking=True on the
     loader's own stream, between two timing events (stats()['device']);
  2. hand over: the loop gets a batch only after the *next* batch's copy was queued, so that
     copy runs while the loop computes. The loop's current stream first waits for the
     batch's copy event, and the tensors are marked as used on it (record_stream), so the
     caching allocator never gives their memory back to the side stream while the loop
     still reads it;
  3. release: the host views, which hold the slot, are dropped once their copy event has
     completed (checked at every step). Before the loader is asked for another slot, the
     oldest copy is waited for while more than `limit` are pending: the C++ consumer may
     hold held_batches slots beyond the one it takes (runtime/src/loader/loader_consumer.cpp),
     and the loop's own batches, on the device, hold none.
"""
import collections
import contextlib

__all__ = ["CudaSide", "DeviceCopies", "check_device", "torch_pinner"]

_HOST_REGISTER_PORTABLE = 1  # cudaHostRegisterPortable: page-locked for every CUDA context


def check_device(to_device):
    """Loader(to_device=...) as a torch.device with its index, or None (host memory)."""
    if to_device is None:
        return None
    import torch

    if not isinstance(to_device, (str, torch.device)):
        raise TypeError(f"to_device must be None, a str or a torch.device, "
                        f"got {type(to_device).__name__} {to_device!r}")
    try:
        device = torch.device(to_device)
    except RuntimeError as e:
        raise ValueError(f"to_device={to_device!r}: {e}") from None
    if device.type == "cpu":
        return None
    if device.type != "cuda":
        raise ValueError(f"to_device={to_device!r}: only CUDA devices are supported")
    if not torch.cuda.is_available():
        raise ValueError(f"to_device={to_device!r}: PyTorch sees no CUDA device on this "
                         "machine (or was built without CUDA); leave to_device=None and "
                         "the batches stay in host memory")
    if device.index is None:  # 'cuda': the current device now, fixed for the loader's life
        return torch.device("cuda", torch.cuda.current_device())
    if device.index >= torch.cuda.device_count():
        raise ValueError(f"to_device={to_device!r}: PyTorch sees "
                         f"{torch.cuda.device_count()} CUDA device(s)")
    return device


def torch_pinner(device):
    """(pin, unpin, description) for the C++ loader (runtime/python/src/py_pinner.hpp):
    cudaHostRegister through torch's own cudart, on `device`. A failed registration raises
    torch.cuda.CudaError, which the loader turns into a note and runs on pageable memory;
    the error is first taken out of the thread's last-error slot (_take_last_error).
    torch 1.13: cudart().cudaHostRegister(ptr, size, flags) and cudaHostUnregister(ptr)
    return a cudaError (its int value, 0 for success)."""
    import torch

    cudart = torch.cuda.cudart()

    def pin(ptr, size):
        with _current(torch, device):
            result = cudart.cudaHostRegister(ptr, size, _HOST_REGISTER_PORTABLE)
            if int(result) != 0:
                _take_last_error(torch, device)
            torch.cuda.check_error(result)

    def unpin(ptr):
        with _current(torch, device):
            result = int(cudart.cudaHostUnregister(ptr))
            if result != 0:
                _take_last_error(torch, device)
            return result

    return pin, unpin, f"cudaHostRegister through torch on {device}"


def _take_last_error(torch, device):
    """A failed runtime call leaves its error in the thread's last-error slot, and torch's
    next kernel-launch check (cudaGetLastError) raises it: the user's first step would fail
    on a pin the loader had already turned into a note. torch binds no cudaGetLastError, so a
    kernel of ours takes it now: its launch check reads and clears the slot, raising what it
    found (expected here); the second launch checks the slot is clean."""
    for _ in range(2):
        try:
            torch.ones(1, device=device)
            return
        except RuntimeError:
            pass


@contextlib.contextmanager
def _current(torch, device):
    """`device` current for the block. Under CUDA 12 and later the previous device comes
    back only when its primary context exists: on a thread that never chose one (the arena's
    last owner may be a worker thread) it reads as device 0, and setting it would create a
    context there (CUDA 12's cudaSetDevice does; torch.cuda.device before torch 2.1 restores
    it regardless). A torch built for an older CUDA (cu118) sets a device without making its
    context, so the previous device always comes back: one chosen but not used yet has no
    context either, and leaving it would move the caller to `device`."""
    previous = torch.cuda.current_device()
    if previous == device.index:
        yield
        return
    torch.cuda.set_device(device)
    try:
        yield
    finally:
        has_context = getattr(torch._C, "_cuda_hasPrimaryContext", None)
        if not _set_device_makes_context(torch) or has_context is None or has_context(previous):
            torch.cuda.set_device(previous)


def _set_device_makes_context(torch):
    """Whether torch's cudaSetDevice makes the device's primary context (CUDA 12 and later)."""
    version = getattr(torch.version, "cuda", None) or "12"
    return int(version.split(".")[0]) >= 12


class _Copy:
    """One batch's copy: the device tensors and the events around it on the side stream."""

    def __init__(self, out, start, end):
        self.out, self.start, self.end = out, start, end

    def done(self):
        return self.end.query()

    def wait(self):
        self.end.synchronize()

    def seconds(self):
        return self.start.elapsed_time(self.end) / 1e3  # both recorded and done


class CudaSide:
    """The side stream on one CUDA device. The caller's current device and streams are left
    as they were: every call sets them inside a `with` and restores them."""

    def __init__(self, device, torch=None):
        """`torch`: the torch module, or a simulated one (tests/python/sim_device.py)."""
        if torch is None:
            import torch

        self._torch = torch
        self.device = device
        self.stream = torch.cuda.Stream(device)

    def copy(self, tensors):
        torch = self._torch
        with torch.cuda.device(self.device), torch.cuda.stream(self.stream):
            # Allocated before the start event, so that the events time the copies alone.
            out = [torch.empty(t.shape, dtype=t.dtype, device=self.device) for t in tensors]
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record(self.stream)
            for dst, src in zip(out, tensors):
                dst.copy_(src, non_blocking=True)
            end.record(self.stream)
        return _Copy(out, start, end)

    def synchronize(self):
        """Blocks until every copy queued on the side stream is done."""
        self.stream.synchronize()

    def hand_over(self, copy):
        """The copy's tensors, made safe for the caller's current stream on the device."""
        stream = self._torch.cuda.current_stream(self.device)
        stream.wait_event(copy.end)
        for t in copy.out:
            t.record_stream(stream)
        return copy.out


class DeviceCopies:
    """The copies in flight and the host slots they hold. `side` does the copies (CudaSide);
    `limit` is the most slots they may hold when the loader is asked for another one."""

    def __init__(self, side, limit):
        self.side, self.limit = side, limit
        self._pending = collections.deque()  # (copy, host tensors), oldest first
        self.recent = collections.deque(maxlen=256)  # finished copies (the gpu tests time them)
        self.batches = self.bytes = 0
        self.seconds = 0.0

    def make_room(self):
        """Before asking the loader for a slot: let the slots of finished copies go, and
        wait for the oldest copy while more than `limit` are pending (copies on one stream
        finish in order, so the oldest is the first to look at). Up to `limit` copies stay
        in flight while the loader is asked: the C++ consumer may hold held_batches slots
        beyond the one it takes, so with held_batches=1 the copy of batch n still runs while
        batch n+1 is taken (waiting for it first lost that overlap)."""
        pending = self._pending
        while pending and (len(pending) > self.limit or pending[0][0].done()):
            self._finish(*pending.popleft())

    def queue(self, views):
        """Queues the copy of a batch's data and labels (the C++ loader's views of one
        slot, kept until the copy is done); returns what hand_over() takes."""
        import torch

        data, labels, indices, _epoch, _number = views
        host = (torch.from_numpy(data), torch.from_numpy(labels))
        try:
            copy = self.side.copy(host)
        except BaseException:
            # The batch's first copy may be queued already (the labels' then failed): it
            # reads the slot, which goes back to the loader, to be refilled, as soon as the
            # views die with this exception. The side's stream is waited for first; an
            # error of that wait would only hide the one that matters.
            try:
                self.side.synchronize()
            except Exception:  # noqa: BLE001
                pass
            raise
        self._pending.append((copy, host))
        # The indices stay on the host, copied out of the slot: a loop that keeps them must
        # not keep the slot too (it would count against held_batches).
        return copy, torch.from_numpy(indices.view("int64").copy())

    def hand_over(self, queued):
        """(data, labels, indices) for the loop, data and labels on the device."""
        copy, indices = queued
        data, labels = self.side.hand_over(copy)
        copy.out = None  # the loop owns the device tensors now
        return data, labels, indices

    def drain(self):
        """At the end of a loop, a break or close: every pending copy is waited for before
        its slot goes back to the loader (the workers would write into it)."""
        while self._pending:
            self._finish(*self._pending.popleft())

    def _finish(self, copy, host):
        copy.wait()
        self.batches += 1
        self.bytes += sum(t.numel() * t.element_size() for t in host)
        self.seconds += copy.seconds()
        self.recent.append((copy.start, copy.end))
        # `host` dies with this frame: the slot returns to the loader.

    def stats(self):
        """Copies finished so far: batches, bytes, seconds the side stream spent copying,
        and the rate (GB/s, 1e9 bytes)."""
        rate = self.bytes / self.seconds / 1e9 if self.seconds > 0 else 0.0
        return {"batches": self.batches, "bytes": self.bytes, "copy_seconds": self.seconds,
                "copy_gb_per_s": rate, "in_flight": len(self._pending), "limit": self.limit}
