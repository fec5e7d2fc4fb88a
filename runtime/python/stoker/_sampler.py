"""stoker.DistributedSampler: a drop-in for torch.utils.data.DistributedSampler whose order,
shards and resume state come from the C++ sampler (O(1) memory, elastic mid-epoch resume,
ranks checked at each epoch start)."""
import operator

from . import _stoker
from ._agree import Agreement
from ._checks import check_bool, check_int
from ._fingerprint import dataset_fingerprint
from ._world import find_world, torch_group

try:  # a DistributedSampler to every library that checks for one (Lightning, Accelerate)
    from torch.utils.data.distributed import DistributedSampler as _TorchDistributedSampler
except ImportError:  # without torch: the same class, on its own
    _TorchDistributedSampler = object

__all__ = ["DistributedSampler"]

_CHUNK = 1024  # indices fetched from C++ at a time: iteration never holds the whole shard
_SEEDS = (-2**63, 2**64 - 1)  # torch.Generator.manual_seed's range (negatives wrap, as there)


def _integer(name, value):
    """Any integer torch takes (int, numpy.int64, anything with __index__), as an int."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer (an int, a numpy integer or anything with "
                        f"__index__), got {type(value).__name__} {value!r}") from None


def _core_epoch(epoch):
    return epoch % 2**64  # set_epoch takes any int, as torch's; the C++ epoch is unsigned


def _python_epoch(epoch):
    return epoch - 2**64 if epoch >= 2**63 else epoch  # set_epoch(-1) reads back as -1


class DistributedSampler(_TorchDistributedSampler):
    """Use it where torch.utils.data.DistributedSampler goes:

        sampler = stoker.DistributedSampler(dataset, shuffle=True, seed=0)
        loader = DataLoader(dataset, batch_size=64, sampler=sampler,
                            **stoker.plan().torch_dataloader_kwargs())
        for epoch in range(start_epoch, epochs):
            sampler.set_epoch(epoch)
            for k, batch in enumerate(loader):
                ...
                if k % 100 == 0:
                    torch.save({"sampler": sampler.state_dict(consumed=(k + 1) * 64), ...}, ...)
        # resume, also on another number of ranks: sampler.load_state_dict(ckpt["sampler"])

    A subclass of torch.utils.data.distributed.DistributedSampler (when torch is there), so
    that code which checks for one keeps it; picklable and deep-copyable (the settings and a
    loaded state travel, not the C++ sampler). The arguments are torch's, and take what
    torch takes (any __index__ integer, any truthy shuffle/drop_last):
      dataset       anything with len()
      num_replicas  the world size; None: an initialised torch.distributed group's (as
                    torch), else the launcher's (OMPI_*, RANK/WORLD_SIZE, SLURM_*, MPI), else
                    1. world_source says which
      rank          this rank; None: detected likewise
      shuffle       a fresh order each epoch: a pure function of (seed, epoch, len(dataset)),
                    O(1) memory; shuffle=False gives torch's order exactly
      seed          None: STOKER_SEED, else 0. Every rank must use the same one; a negative
                    one is taken modulo 2**64, as torch.Generator.manual_seed does
      drop_last     False: pad the tail by wrapping to equal shards (torch's rule); True:
                    drop the uneven tail
    and, keyword only:
      ra_reps       repeated augmentation, as torchvision's RASampler (its reference
                    train.py's --ra-sampler --ra-reps N): each index of the epoch's order
                    N times in a row, dealt round robin, the epoch cut to
                    floor(len(dataset) // 256 * 256 / num_replicas) indices per rank
                    (drop_last then has no effect). shuffle=False gives RASampler's order
                    exactly. Fewer than 256 samples (or a rank with none) is a stoker.Error,
                    where RASampler yields an empty epoch. 1 (default): off
      agree         check at each epoch start that every rank agrees on seed, epoch, dataset
                    size and options (under MPI, or torch.distributed when initialised; a
                    collective). False for a sampler that one rank uses alone.
      fingerprint   a str, bytes or int naming the dataset's contents (a version): checked
                    with len(dataset) across ranks and on resume. None: a few items are
                    hashed when they are tensors, arrays or bytes; else only the length is
                    checked (the `fingerprint` attribute says "not checked" and why).
                    False: read no item (a dataset that opens a file handle on first access
                    and must not do so before the DataLoader forks its workers)

    The public attributes are torch's (num_replicas, rank, epoch, num_samples, total_size,
    shuffle, seed, drop_last, dataset); changing one takes effect at the next iteration.
    The order differs from torch's when shuffling (a keyed permutation, not randperm), and so
    do the shards after a resume; padding and dropping follow torch's rule.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=None,
                 drop_last=False, *, ra_reps=1, agree=True, fingerprint=None):
        size = len(dataset)
        if size == 0:
            raise ValueError("the dataset is empty: a sampler needs at least one sample")
        world = find_world(
            "DistributedSampler",
            None if num_replicas is None else _integer("num_replicas", num_replicas),
            None if rank is None else _integer("rank", rank))
        if world.world_size < 1:
            raise ValueError(f"num_replicas={world.world_size}: must be at least 1")
        if not 0 <= world.rank < world.world_size:  # torch's own words
            raise ValueError(f"Invalid rank {world.rank}, rank should be in the interval "
                             f"[0, {world.world_size - 1}]")
        seed = _stoker.seed_from_environment(0) if seed is None else _integer("seed", seed)
        if not _SEEDS[0] <= seed <= _SEEDS[1]:
            raise ValueError(f"seed={seed}: must be in [-2**63, 2**64 - 1], the seeds "
                             "torch.Generator.manual_seed takes")
        self.dataset = dataset
        self.num_replicas, self.rank = world.world_size, world.rank
        self.world_source = world.source  # where num_replicas and rank came from
        group = torch_group() if world.source.startswith("torch.distributed") else None
        # The group's place this sampler was made for: checked at each iteration
        self._group_place = None if group is None else (group.get_rank(),
                                                        group.get_world_size())
        self.shuffle, self.drop_last, self.seed = bool(shuffle), bool(drop_last), seed
        self.ra_reps = check_int("ra_reps", ra_reps, 1)
        self.epoch = 0
        self._agree = check_bool("agree", agree)
        self._fingerprint_key = fingerprint
        self._restored = None  # a pass load_state_dict() prepared
        self._build()

    def _build(self, agree_seed=True):
        """The C++ sampler and the agreement for the public attributes as they are now.
        agree_seed: under MPI take rank 0's seed (a collective: every rank builds at the same
        point, at construction or at the iteration after an attribute changed); not for a
        copy, whose seed was agreed already."""
        size = len(self.dataset)
        self._fingerprint = dataset_fingerprint(self.dataset, size, self._fingerprint_key)
        self._agreement = Agreement(self.rank, self.num_replicas, self._agree,
                                    self.world_source)
        core = _stoker._Sampler(size, self.num_replicas, self.rank, bool(self.shuffle),
                                self.seed % 2**64, bool(self.drop_last),
                                self._fingerprint.value, self.ra_reps)
        if agree_seed and self._agreement.by_mpi:  # rank 0's seed, as the C++ loader takes
            agreed = core.agree_mpi()
            if agreed != core.seed:
                self.seed = agreed
                core = _stoker._Sampler(size, self.num_replicas, self.rank, bool(self.shuffle),
                                        agreed, bool(self.drop_last), self._fingerprint.value,
                                        self.ra_reps)
        self._core = core
        self._built_for = self._settings()
        self.num_samples = core.length  # of a full epoch
        self.total_size = self.num_samples * self.num_replicas
        self._pass = None      # the pass being iterated (since the last __iter__)
        self._handed_out = 0   # indices of self._pass handed out so far

    def _settings(self):
        return (len(self.dataset), self.num_replicas, self.rank, bool(self.shuffle),
                self.seed, bool(self.drop_last), self.ra_reps)

    # ---- torch's interface --------------------------------------------------------------
    def set_epoch(self, epoch):
        """The epoch the next iteration walks. Calling it with the epoch of a state just
        loaded keeps that state (the usual loop calls set_epoch first). Any int, as torch's
        (a negative one too: the epochs are taken modulo 2**64)."""
        self.epoch = _integer("epoch", epoch)
        self._pass, self._handed_out = None, 0

    def __len__(self):
        """Indices of the pass in progress (since the last iter()); after set_epoch() or
        load_state_dict(), of the next one (a resumed epoch's rest)."""
        return self._current().length

    def __iter__(self):
        self._check_group()
        pass_ = self._next_pass()
        self._restored = None
        self._agreement.check(pass_.view, pass_.epoch, mpi=pass_.agree_mpi)  # collective
        self._pass, self._handed_out = pass_, 0
        return self._walk(pass_)

    # ---- resume -------------------------------------------------------------------------
    def state_dict(self, consumed=None):
        """Where the epoch stands after the training loop consumed `consumed` of this rank's
        indices of the current pass (count them as batches done x batch size: a DataLoader
        reads ahead, so only the loop knows). A count past the pass's end means it is done
        (the last batch may be short). None: nothing consumed yet, only right after
        set_epoch() or load_state_dict() (else ValueError: a DataLoader's read-ahead makes
        the sampler's own count wrong). Resume with load_state_dict(), on any number of
        ranks: the rest of the epoch, each sample exactly once (the pad/drop rule aside)."""
        pass_ = self._current()
        if consumed is None:
            if self._handed_out > 0:
                raise ValueError(
                    f"state_dict(): the sampler handed out {self._handed_out} of "
                    f"{pass_.length} indices, but a DataLoader reads ahead of the training "
                    "loop: pass consumed=batches_done * batch_size")
            consumed = 0
        check_int("consumed", consumed, 0)
        if consumed > self._handed_out:
            if self._handed_out < pass_.length:
                raise ValueError(
                    f"state_dict(consumed={consumed}): only {self._handed_out} indices were "
                    "handed out so far; count this rank's samples (batches x batch size), "
                    "not all ranks'")
            consumed = pass_.length
        return pass_.state(consumed)

    def load_state_dict(self, state):
        """The next iteration continues the state's epoch from its position, on this
        sampler's number of ranks. stoker.Error for another dataset size or seed."""
        if not isinstance(state, dict) or not isinstance(state.get("sampler"), str):
            raise TypeError("state must be a dict from DistributedSampler.state_dict() "
                            f"(with a 'sampler' string), got {state!r}")
        pass_ = self._core.copy()
        pass_.restore(state["sampler"])
        self._restored, self._pass, self._handed_out = pass_, None, 0
        self.epoch = _python_epoch(pass_.epoch)

    # ---- pickle and copy: the settings and a loaded state travel, not the C++ sampler ----
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_core", "_agreement", "_pass", "_restored", "_handed_out",
                              "_fingerprint", "_built_for")}
        state["_restored"] = (None if self._restored is None
                              else self._restored.state(0)["sampler"])
        return state

    def __setstate__(self, state):
        restored = state.pop("_restored")
        self.__dict__.update(state)
        self._restored = None
        self._build(agree_seed=False)  # one rank may copy alone: no collective
        if restored is not None:
            self.load_state_dict({"sampler": restored})
            self.epoch = state["epoch"]

    # ---- reporting ----------------------------------------------------------------------
    @property
    def agreement(self):
        """What checks the ranks: 'MPI', 'torch.distributed (gloo)', 'single rank (WHERE
        THE WORLD CAME FROM)', 'off', or 'not checked: ...' (said once on stderr too); None
        before the first epoch."""
        return self._agreement.mode

    @property
    def fingerprint(self):
        """The dataset's fingerprint as the ranks compare it, or 'not checked: why'."""
        return self._fingerprint.text

    def stats(self):
        pass_ = self._current()
        return {"agreement": self.agreement, "world": self.world_source,
                "fingerprint": self.fingerprint, "epoch": _python_epoch(pass_.epoch),
                "start": pass_.start, "length": pass_.length, "handed_out": self._handed_out}

    def __repr__(self):
        return (f"stoker.DistributedSampler(size={len(self.dataset)}, "
                f"num_replicas={self.num_replicas}, rank={self.rank}, shuffle={self.shuffle}, "
                f"seed={self.seed}, drop_last={self.drop_last}, ra_reps={self.ra_reps}, "
                f"epoch={self.epoch})")

    # ---- helpers ------------------------------------------------------------------------
    def _current(self):
        return self._pass if self._pass is not None else self._next_pass()

    def _next_pass(self):
        if self._settings() != self._built_for:  # an attribute was set, as torch allows
            self._restored = None
            self._build()
        if self._restored is not None and self._restored.epoch == _core_epoch(self.epoch):
            return self._restored
        self._restored = None  # another epoch was set since the load
        pass_ = self._core.copy()
        pass_.set_epoch(_core_epoch(self.epoch))
        return pass_

    def _check_group(self):
        """A sampler whose world came from a process group, used on another rank of it (or of
        another group), would hand out another rank's shard: refused."""
        dist = torch_group()
        if dist is None or self._group_place is None:
            return
        now = (dist.get_rank(), dist.get_world_size())
        if now != self._group_place:
            made = self._group_place
            raise _stoker.Error(
                f"DistributedSampler: made on rank {made[0]} of {made[1]} of a "
                f"torch.distributed group, used on rank {now[0]} of {now[1]} of the group "
                "initialised now: make the sampler on each rank after init_process_group "
                "(or pass num_replicas and rank)")

    def _walk(self, pass_):
        for first in range(0, pass_.length, _CHUNK):
            for index in pass_.indices(first, _CHUNK):
                if self._pass is pass_:
                    self._handed_out += 1
                yield index
