"""stoker.DistributedSampler: a drop-in for torch.utils.data.DistributedSampler whose order,
shards and resume state come from the C++ sampler (O(1) memory, elastic mid-epoch resume,
ranks checked at each epoch start)."""
from . import _stoker
from ._agree import Agreement
from ._checks import check_bool, check_int

__all__ = ["DistributedSampler"]

_CHUNK = 1024  # indices fetched from C++ at a time: iteration never holds the whole shard


class DistributedSampler:
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

    The arguments are torch's:
      dataset       anything with len()
      num_replicas  the world size; None: detected as the C++ loader does (MPI, RANK/WORLD_SIZE,
                    SLURM_PROCID/SLURM_NTASKS, else 1)
      rank          this rank; None: detected likewise
      shuffle       a fresh order each epoch: a pure function of (seed, epoch, len(dataset)),
                    O(1) memory; shuffle=False gives torch's order exactly
      seed          None: STOKER_SEED, else 0. Every rank must use the same one
      drop_last     False: pad the tail by wrapping to equal shards (torch's rule); True:
                    drop the uneven tail
    and, keyword only:
      agree         check at each epoch start that every rank agrees on seed, epoch, dataset
                    size and options (under MPI, or torch.distributed when initialised; a
                    collective). False for a sampler that one rank uses alone.

    The order differs from torch's when shuffling (a keyed permutation, not randperm), and so
    do the shards after a resume; padding and dropping follow torch's rule.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=None,
                 drop_last=False, *, agree=True):
        self.dataset = dataset
        size = len(dataset)
        if size == 0:
            raise ValueError("the dataset is empty: a sampler needs at least one sample")
        if num_replicas is None or rank is None:
            world = _stoker.world()
            num_replicas = world["world_size"] if num_replicas is None else num_replicas
            rank = world["rank"] if rank is None else rank
        check_int("num_replicas", num_replicas, 1)
        check_int("rank", rank, 0)
        if rank >= num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        seed = _stoker.seed_from_environment(0) if seed is None else seed
        self.num_replicas, self.rank = num_replicas, rank
        self.shuffle = check_bool("shuffle", shuffle)
        self.drop_last = check_bool("drop_last", drop_last)
        self._agreement = Agreement(rank, num_replicas, check_bool("agree", agree))
        core = _stoker._Sampler(size, num_replicas, rank, self.shuffle,
                                check_int("seed", seed, 0, 2**64 - 1), self.drop_last)
        if self._agreement.by_mpi:  # every rank takes rank 0's seed, as the C++ loader does
            seed = core.agree_mpi()
            if seed != core.seed:
                core = _stoker._Sampler(size, num_replicas, rank, self.shuffle, seed,
                                        self.drop_last)
        self._core = core
        self.seed = seed
        self.epoch = 0
        self.num_samples = core.length  # of a full epoch
        self.total_size = self.num_samples * num_replicas
        self._restored = None  # a pass load_state_dict() prepared
        self._pass = None      # the pass being iterated (since the last __iter__)
        self._handed_out = 0   # indices of self._pass handed out so far

    # ---- torch's interface --------------------------------------------------------------
    def set_epoch(self, epoch):
        """The epoch the next iteration walks. Calling it with the epoch of a state just
        loaded keeps that state (the usual loop calls set_epoch first)."""
        self.epoch = check_int("epoch", epoch, 0)
        if self._restored is not None and self._restored.epoch != self.epoch:
            self._restored = None
        self._pass, self._handed_out = None, 0

    def __len__(self):
        """Indices of the pass in progress (since the last iter()); after set_epoch() or
        load_state_dict(), of the next one (a resumed epoch's rest)."""
        return self._current().length

    def __iter__(self):
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
        self.epoch = pass_.epoch

    # ---- reporting ----------------------------------------------------------------------
    @property
    def agreement(self):
        """What checks the ranks: 'MPI', 'torch.distributed (gloo)', 'single rank', 'off', or
        'not checked: ...' (said once on stderr too); None before the first epoch."""
        return self._agreement.mode

    def stats(self):
        pass_ = self._current()
        return {"agreement": self.agreement, "epoch": pass_.epoch, "start": pass_.start,
                "length": pass_.length, "handed_out": self._handed_out}

    def __repr__(self):
        return (f"stoker.DistributedSampler(size={len(self.dataset)}, "
                f"num_replicas={self.num_replicas}, rank={self.rank}, shuffle={self.shuffle}, "
                f"seed={self.seed}, drop_last={self.drop_last}, epoch={self.epoch})")

    # ---- helpers ------------------------------------------------------------------------
    def _current(self):
        return self._pass if self._pass is not None else self._next_pass()

    def _next_pass(self):
        if self._restored is not None:
            return self._restored
        pass_ = self._core.copy()
        pass_.set_epoch(self.epoch)
        return pass_

    def _walk(self, pass_):
        for first in range(0, pass_.length, _CHUNK):
            for index in pass_.indices(first, _CHUNK):
                if self._pass is pass_:
                    self._handed_out += 1
                yield index
