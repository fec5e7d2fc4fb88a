"""The loop over a stoker.Loader: one epoch's batches at a time, where the epoch stands
(state_dict) and how a loop resumes from it (load_state_dict)."""
from . import _stoker

__all__ = ["LoaderLoop"]

_torch_from_numpy = None


def _from_numpy():
    """torch.from_numpy, imported on the first batch a loop hands out as tensors."""
    global _torch_from_numpy
    if _torch_from_numpy is None:
        import torch

        _torch_from_numpy = torch.from_numpy
    return _torch_from_numpy


class _Loop:
    """A loop in progress: its epoch, the batches it took, and whether set_epoch() or
    load_state_dict() since let another loop replace it."""

    def __init__(self, epoch):
        self.epoch, self.batches, self.replaceable = epoch, 0, False
        self.ahead = 0  # batches taken from the C++ loader, not yet handed to the loop


class LoaderLoop:
    """Iteration, epochs and resume of stoker.Loader (a base of Loader). The Loader sets
    _core (the C++ loader), _agreement, _copies (with to_device), _as_numpy,
    _return_indices and _loop (the _Loop in progress, else None)."""

    def __iter__(self):
        """One loop over the epoch set_epoch() named (or the next one). A loop is in progress
        from its first batch until its iterator is exhausted, raises, or is closed:
        it.close(), or when the iterator is garbage-collected, which CPython does as soon as
        a `for` loop that owns it exits early (break, return, an exception). Starting another
        loop while one is in progress is a stoker.Error, unless set_epoch() or
        load_state_dict() came in between: then the new loop replaces the old one, whose
        iterator raises stoker.Error if used again."""
        core, copies = self._core, self._copies
        indices = self._return_indices or copies is not None  # else none are made
        loop = self._begin_loop()
        try:
            self._agreement.check(core.loop_view, core.next_loop_epoch)  # collective
            core.start_epoch()
            loop.epoch = core.epoch
            queued = None  # to_device: the batch whose copy runs, not yet handed over
            take, convert = core.next, self._convert  # looked up once: next() is per batch
            while copies is None:  # the batches as they come
                views = take(indices)  # releases the GIL while waiting
                if views is None:
                    break
                loop.batches += 1
                batch = convert(views)
                del views
                yield batch
                if self._loop is not loop:
                    self._check_current(loop)
            while copies is not None:
                copies.make_room()
                views = take(indices)
                if views is None:
                    break
                loop.batches += 1
                # Queue this batch's copy, hand over the one queued before.
                batch, queued = queued, copies.queue(views)
                loop.ahead = 1
                del views  # the slot's views: only the pending copy holds them
                if batch is not None:
                    yield self._handed(batch)
                    self._check_current(loop)
            loop.ahead = 0
            if queued is not None:
                yield self._handed(queued)
                self._check_current(loop)
        finally:
            loop.ahead = 0
            if copies is not None:
                copies.drain()  # no slot goes back while a copy still reads it
            if self._loop is loop:
                self._loop = None

    def _check_current(self, loop):
        if self._loop is not loop:
            raise _stoker.Error(f"stoker.Loader: this loop over epoch {loop.epoch} was "
                                "replaced by a newer one (set_epoch or load_state_dict, "
                                "then another loop); iterate the newer one")

    def _begin_loop(self):
        running = self._loop
        if running is not None and not running.replaceable:
            raise _stoker.Error(
                f"stoker.Loader: a loop over epoch {running.epoch} is in progress ("
                f"{running.batches} of {len(self)} batches taken); another loop would start "
                "that epoch over (finish or break the first loop, or close its iterator; or call "
                "set_epoch(e) first to start another epoch)")
        self._loop = _Loop(self._core.epoch)
        return self._loop

    def __len__(self):
        """Batches per full epoch on this rank."""
        return self._core.batches_per_epoch

    def set_epoch(self, epoch):
        """The epoch the next loop iterates (its order depends on seed and epoch only)."""
        self._core.set_epoch(epoch)
        self._release_loop()

    @property
    def epoch(self):
        return self._core.epoch

    def state_dict(self):
        """Where the current epoch stands: resume from it with load_state_dict(), also on a
        different world size (no sample of the epoch repeated or lost). With to_device, the
        batch whose copy runs ahead of the loop counts as not yet taken."""
        return self._core.state(self._loop.ahead if self._loop is not None else 0)

    def load_state_dict(self, state):
        """The next loop continues the state's epoch from its position."""
        if not isinstance(state, dict) or not isinstance(state.get("sampler"), str):
            raise TypeError("state must be a dict from Loader.state_dict() "
                            f"(with a 'sampler' string), got {state!r}")
        self._core.restore(state["sampler"])
        self._release_loop()

    def _release_loop(self):
        """The loop in progress may be replaced by the next one (set_epoch, a restore)."""
        if self._loop is not None:
            self._loop.replaceable = True

    def _convert(self, views):
        data, labels, indices, _epoch, _number = views
        if not self._as_numpy:
            from_numpy = _from_numpy()
            data, labels = from_numpy(data), from_numpy(labels)
            if self._return_indices:
                indices = from_numpy(indices.view("int64"))
        if self._return_indices:
            return data, labels, indices
        return data, labels

    def _handed(self, batch):
        """The batch as the loop gets it (with to_device, from the copy queued for it)."""
        if self._copies is not None:
            batch = self._copies.hand_over(batch)
            if not self._return_indices:
                batch = batch[:2]
        return batch
