"""The epoch agreement of stoker.Loader and stoker.DistributedSampler: at each epoch start
every rank checks that all ranks agree on the seed, epoch, dataset and sampler options.

Under MPI the C++ side exchanges the views (rank 0's seed is taken). Otherwise, when
torch.distributed is initialised, the views go through its store (whatever the backend:
gloo, NCCL) and the C++ check judges them, so the messages are the same as under MPI; the
seeds must then match, as torch's own DistributedSampler requires. Without either, the
ranks are not checked, and stoker says so once.

The store exchange waits like a collective: rank 0 names the late ranks (rank 1 names rank
0 when it is the late one) every STOKER_AGREE_WARN seconds, and a rank gives up with
stoker.Error after STOKER_AGREE_TIMEOUT seconds (0: never).
"""
import itertools
import time

from . import _stoker
from . import _notes
from ._world import torch_group

__all__ = ["Agreement", "store_failed", "store_wait"]

# Store exchanges made by this process: every rank makes them in the same order (like
# collectives), so the n-th one has the same keys on every rank.
_exchanges = itertools.count()


def _mpi_world():
    """Whether MPI gives this process's world. With a torch.distributed group the launcher's
    variables need not say a world (PyTorch's harness sets WORLD_SIZE alone): no MPI then."""
    try:
        return _stoker.world()["mpi"]
    except _stoker.Error:
        if torch_group() is None:
            raise
        return False


class Agreement:
    """What checks one loader's or sampler's epochs, and the check itself."""

    def __init__(self, rank, world_size, agree, world_source=None):
        """world_source: where rank and world_size came from (stoker/_world.py), said by
        "single rank (...)": a world of one taken from the wrong place is the silent
        double-data bug (docs/reliability.md)."""
        self.rank, self.world_size, self.world_source = rank, world_size, world_source
        if not agree:
            self.mode = "off"
        elif world_size == 1:
            self.mode = "single rank" + (f" (world from {world_source})" if world_source else "")
        elif _mpi_world():
            self.mode = "MPI"
        else:
            self.mode = None  # torch.distributed or not checked: decided at each epoch start

    @property
    def by_mpi(self):
        return self.mode == "MPI"

    def check(self, view, epoch, mpi=None):
        """At an epoch start: view(comm_rank) -> this rank's epoch view (a list of ints).
        Raises stoker.Error when the ranks disagree or a rank does not arrive in time.
        Under MPI it calls mpi() (None: the caller's C++ side checks by itself)."""
        if self.mode == "MPI" and mpi is not None:
            mpi()
        if self.mode in ("off", "MPI") or self.world_size == 1:
            return
        dist = torch_group()
        if dist is None:
            self.mode = _stoker.note_unchecked_ranks(self.rank, self.world_size)
            return
        self.mode = f"torch.distributed ({dist.get_backend()})"
        _StoreExchange(dist, epoch).run(view(dist.get_rank()))


class _StoreExchange:
    """One agreement over torch.distributed's store: every rank posts its view; rank 0
    waits for all, checks them and posts the verdict; every rank reads it and
    acknowledges; rank 0 waits for the acknowledgements (so that it never leaves, taking
    the store with it, while a rank still reads) and removes the keys."""

    def __init__(self, dist, epoch):
        self.store = dist.distributed_c10d._get_default_store()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.epoch = epoch
        self.prefix = f"stoker/agree/{next(_exchanges)}"
        self.warn, self.timeout = _stoker.agree_wait()

    def run(self, words):
        p, store, rank = self.prefix, self.store, self.rank
        try:
            store.set(f"{p}/view/{rank}", ",".join(str(w) for w in words))
            store.add(f"{p}/here/{rank}", 1)
            store.add(f"{p}/arrived", 1)
            if rank == 0:
                verdict = self._judge()
            else:
                self._wait(f"{p}/decided", 1, self._rank0_missing)
                verdict = store.get(f"{p}/verdict").decode()
                store.add(f"{p}/read", 1)
        except RuntimeError as e:
            raise store_failed(e, f"agree_on_epoch: rank {rank}",
                               f"at the start of epoch {self.epoch}") from None
        if verdict != "ok":
            raise _stoker.Error(verdict)

    def _judge(self):
        p, store = self.prefix, self.store
        self._wait(f"{p}/arrived", self.world, self._missing)
        views = [[int(w) for w in store.get(f"{p}/view/{r}").decode().split(",")]
                 for r in range(self.world)]
        try:
            _stoker.check_epoch_views(views, seeds_must_match=True)
            verdict = "ok"
        except _stoker.Error as e:
            verdict = str(e)
        store.set(f"{p}/verdict", verdict)
        store.add(f"{p}/decided", 1)
        self._wait(f"{p}/read", self.world - 1, lambda: [])
        for r in range(self.world):
            store.delete_key(f"{p}/view/{r}")
            store.delete_key(f"{p}/here/{r}")
        for key in ("arrived", "decided", "read", "verdict"):
            store.delete_key(f"{p}/{key}")
        return verdict

    def _missing(self):
        return [r for r in range(self.world) if self.store.add(f"{self.prefix}/here/{r}", 0) == 0]

    def _rank0_missing(self):
        if self.rank != 1:
            return []
        return [0] if self.store.add(f"{self.prefix}/here/0", 0) == 0 else []

    def _wait(self, key, target, missing):
        """Waits for the counter `key` to reach `target`, naming missing() every warn s."""
        def note(waited):
            late = missing()
            if late:
                _notes.note(_stoker.agree_waiting_line(self.rank, self.epoch,
                                                       _stoker.rank_list(late), waited))

        def timed_out():
            late = missing()
            return "agree_on_epoch: " + _stoker.agree_timeout_text(
                self.epoch, _stoker.rank_list(late) if late else "")

        store_wait(self.store, key, target, (self.warn, self.timeout), note, timed_out)


def store_failed(e, who, when):
    """The error to raise for a RuntimeError `e` out of torch.distributed's store: stoker's
    own errors as they are; any other means the store went away, as it does when rank 0
    (its host) has exited."""
    if isinstance(e, _stoker.Error):
        return e
    return _stoker.Error(f"{who}: torch.distributed's store failed {when} (rank 0, which "
                         f"holds it, may have exited): {e}")


def store_wait(store, key, target, limits, note, timed_out):
    """Polls the store's counter `key` until it reaches `target`, as a collective waits:
    note(seconds waited) every limits[0] s, stoker.Error(timed_out()) after limits[1] s (0:
    never)."""
    warn, timeout = limits
    start = time.monotonic()
    next_note, pause = start + warn, 0.001
    while store.add(key, 0) < target:
        now = time.monotonic()
        if timeout and now - start > timeout:
            raise _stoker.Error(timed_out())
        if now >= next_note:
            next_note += warn
            note(int(now - start))
        time.sleep(pause)
        pause = min(pause * 2, 0.5)  # ranks arriving together: ms; a long wait: 2 polls/s
