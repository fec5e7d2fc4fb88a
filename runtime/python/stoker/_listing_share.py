"""One listing of an image folder per job over torch.distributed: rank 0 lists the folder (or
reads its cached listing) and puts the message the C++ side makes of it
(stoker/distributed/shared_listing.hpp) in the group's store, compressed; every other rank
takes it from there and lists nothing: no stat, open or readdir of the dataset's files.
Under MPI the C++ side shares it by a broadcast; with no group each rank lists the folder.

The message goes in pieces of at most 4 MiB (PIECE): since torch 2.4 the store's server (the
libuv one, PyPI's default) refuses a value over 8 MiB and closes the client's connection,
which is the process group's own; a million UUID-named files compress to about 29 MiB.

Each node still checks its own files, as over MPI (shared_listing.hpp): node-local copies
staged per node may differ from rank 0's. The first rank of each node but rank 0's (the first
to claim its node's name in the store) reads the files of rank 0's content sample and compares
(node_copy_problem: up to 1024 opens, no stat); then every rank learns the first problem any
rank found (a second round through the store) and raises it, none left waiting.

It waits like the epoch agreement: rank 1 says every STOKER_AGREE_WARN seconds that it
waits for rank 0, and a rank gives up with stoker.Error after STOKER_AGREE_TIMEOUT (0:
never). Rank 0 waits until every rank has read the message before removing it, so that it
never leaves, taking the store with it, while a rank still reads. When rank 0 fails before
its listing is out, whatever the cause, the others get its error at once (fail()).
"""
import itertools
import os
import zlib

from . import _stoker
from ._agree import store_failed, store_wait
from . import _notes
from ._world import torch_group

__all__ = ["ListingShare", "PIECE"]

PIECE = 4 << 20  # the most stoker puts in one store value

# Shares made by this process: every rank builds its loaders in the same order (like
# collectives), so the n-th share has the same keys on every rank.
_shares = itertools.count()


class ListingShare:
    """Rank 0's or another rank's part of one shared listing."""

    def __init__(self, dist, root):
        self.store = dist.distributed_c10d._get_default_store()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.root = root
        self.prefix = f"stoker/listing/{next(_shares)}"
        self.limits = _stoker.agree_wait()
        self.published = False  # the message (a listing or an error) is out
        self.store_keys = []  # rank 0's, deleted once every rank has read the verdict

    @classmethod
    def for_loader(cls, kind, source, agreement):
        """The share for Loader(kind, source) on this rank, or None: not an image folder, a
        world of one, agree=False, MPI (the C++ side shares), or no torch.distributed group
        of the loader's size."""
        if kind != "images" or source.get("root") is None or agreement.world_size <= 1:
            return None
        if agreement.mode in ("off", "MPI"):
            return None
        dist = torch_group()
        if dist is None or dist.get_world_size() != agreement.world_size:
            return None
        return cls(dist, os.fspath(source["root"]))

    def folder(self):
        """The folder, listed once for the job: rank 0 lists it and sends the message; the
        others take rank 0's (stoker.Error with rank 0's error when it could not list it).
        Then each node's copy is checked, and every rank raises the first problem found."""
        p = self.prefix
        if self.rank == 0:
            handle, message, failed = _stoker.list_folder(self.root)
            if failed is None:
                self.store.set(f"{p}/problem", "")
                self.store.set(f"{p}/node/{_stoker.node_name()}", "0")  # rank 0's own node
            self._send(message)
            if failed is not None:
                raise _stoker.Error(failed)
            problem = ""
        else:
            message = self._receive()
            if message.startswith(b"error\n"):  # rank 0 failed and left: no second round
                return _stoker.take_folder(self.root, message, self.rank)
            handle, problem = None, ""
            try:
                handle = _stoker.take_folder(self.root, message, self.rank)
                node = _stoker.node_name()
                claimed = self.store.compare_set(f"{p}/node/{node}", "", str(self.rank))
                if claimed.decode() == str(self.rank):
                    problem = _stoker.node_copy_problem(handle)
            except _stoker.Error as e:
                problem = f"{_stoker.node_name()}: {e}"
        self._agree_on_problem(problem)
        return handle

    def _agree_on_problem(self, problem):
        """The second round: every rank adds what it found; all raise the first problem."""
        p = self.prefix
        try:
            if problem:
                self.store.compare_set(f"{p}/problem", "", problem)
            self.store.add(f"{p}/checked", 1)
            store_wait(self.store, f"{p}/checked", self.world, self.limits, lambda waited: None,
                       lambda: f"rank {self.rank}: the ranks did not all check their copy of "
                               f"{self.root} within {self.limits[1]} s (STOKER_AGREE_TIMEOUT)")
            found = self.store.get(f"{p}/problem").decode()
            self.store.add(f"{p}/done", 1)
        except RuntimeError as e:
            raise store_failed(e, f"rank {self.rank}",
                               f"while checking this node's copy of {self.root}") from None
        if self.rank == 0:  # the keys stay until every rank has read the verdict
            store_wait(self.store, f"{p}/done", self.world, self.limits, lambda waited: None,
                       lambda: f"rank 0: the other ranks did not read the copies' verdict on "
                               f"{self.root} within {self.limits[1]} s (STOKER_AGREE_TIMEOUT)")
            for key in self.store_keys:
                self.store.delete_key(key)
        if found:
            raise _stoker.Error(_stoker.node_copy_error(self.root, found))

    def fail(self, error):
        """Rank 0 failed before its listing was out: the others get its error."""
        if self.rank == 0 and not self.published:
            try:
                self._send(_stoker.shared_listing_error(f"{type(error).__name__}: {error}"
                                                        if not isinstance(error, _stoker.Error)
                                                        else str(error)))
            except Exception:  # noqa: BLE001 (the store itself failed: nothing can be said)
                pass

    def _send(self, message):
        p = self.prefix
        packed = zlib.compress(message, 1)
        pieces = [packed[i:i + PIECE] for i in range(0, len(packed), PIECE)] or [b""]
        for i, piece in enumerate(pieces):
            self.store.set(f"{p}/piece/{i}", piece)
        self.store.set(f"{p}/pieces", str(len(pieces)))
        self.store.add(f"{p}/ready", 1)  # what the others wait for: every piece is there
        self.published = True
        store_wait(self.store, f"{p}/read", self.world - 1, self.limits, lambda waited: None,
                   lambda: f"rank 0: the other ranks did not read its listing of {self.root} "
                           f"within {self.limits[1]} s (STOKER_AGREE_TIMEOUT)")
        for i in range(len(pieces)):  # read by every rank: the memory goes at once
            self.store.delete_key(f"{p}/piece/{i}")
        self.store_keys = [f"{p}/{key}" for key in ("pieces", "ready", "read", "problem",
                                                    "checked", "done")]

    def _receive(self):
        p = self.prefix

        def note(waited):
            if self.rank == 1:
                _notes.note(_stoker.listing_waiting_line(self.rank, self.root, waited))

        try:
            store_wait(self.store, f"{p}/ready", 1, self.limits, note,
                       lambda: f"rank {self.rank}: " + _stoker.listing_timeout_text(self.root))
            count = int(self.store.get(f"{p}/pieces"))
            packed = b"".join(self.store.get(f"{p}/piece/{i}") for i in range(count))
            message = zlib.decompress(packed)
            self.store.add(f"{p}/read", 1)
        except RuntimeError as e:
            raise store_failed(e, f"rank {self.rank}",
                               f"while waiting for rank 0's listing of {self.root}") from None
        return message
