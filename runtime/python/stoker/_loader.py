"""stoker.Loader: the C++ loader (pinned worker threads, recycled batch slots, adaptive
prefetch, distributed sampler) as a PyTorch iterable. Its constructors per source are in
_loader_sources.py, its loop and resume in _loader_loop.py. The arguments that reach the C++
loader are checked there, once (_loader_core.py, against the C++ options tables); this module
checks only what stays in Python (plan, agree, to_device, as_numpy, return_indices)."""
import warnings

from . import _stoker
from ._agree import Agreement
from ._checks import check_bool
from ._device import CudaSide, DeviceCopies, check_device, torch_pinner
from ._listing_share import ListingShare
from ._loader_dataset import LoaderDataset
from ._loader_loop import LoaderLoop
from ._loader_sources import LoaderSources
from ._plan import Plan, _applies_by_default, _apply
from ._world import find_world

__all__ = ["Loader"]


class Loader(LoaderSources, LoaderLoop):
    """Iterate it for (data, labels) batches: torch tensors that view the loader's batch
    slot without a copy. A slot returns to the pool when its tensors are freed; keep at most
    `held_batches` batches alive beyond the loop variable (else stoker.Error, not a hang).

    Build one with Loader.images(...), Loader.tokens(...) or Loader.records(...). Options
    shared by all three (keyword only):
      batch_size        samples per batch (> 0)
      shuffle, seed     the epoch order: a pure function of (seed, epoch, dataset size)
      drop_last         drop the last partial batch (and the uneven tail across ranks)
      world_size, rank  this rank's shard; both None: an initialised torch.distributed
                        group's (as torch's DistributedSampler), else the launcher's
                        (OMPI_*, RANK/WORLD_SIZE, SLURM_*, MPI); world_source says which
      workers           None: the plan's; else worker threads (beyond the plan's worker
                        CPUs they spread over the rank's CPUs: Plan.worker_shares)
      prefetch          None: the plan's; else the starting depth in batches
      max_depth         0: the plan's prefetch_max; else the most the depth may grow to
      adaptive          let the prefetch depth move within [prefetch, max_depth] while
                        running; False keeps it at prefetch
      held_batches      batches the consumer may keep alive beyond the ring; with
                        to_device, the copies in flight instead (the loop's batches
                        then live on the GPU and hold no slot): 2 or more keeps one
                        batch's copy ahead of the loop without waiting
      pin_threads       pin worker i to its share (Plan.worker_shares)
      on_corrupt        'error' (stoker.Error naming the file) or 'skip' (leave it out: each
                        file is named once on stderr and counted in stats()['skipped'],
                        its path in stats()['skipped_files'])
      max_skip_fraction under 'skip', the largest share of an epoch's samples that may be
                        corrupt (default 0.01; 1.0: no limit). Checked on each rank as
                        skipped / tried so far, from the 1000th sample (or at the end of a
                        shorter epoch); past it, stoker.Error
      shuffle_buffer    streamed shards: samples each rank holds to shuffle (None: the
                        plan's, the profile's ShuffleBuffer)
      ra_reps           repeated augmentation (torchvision's --ra-sampler --ra-reps N): each
                        sample N times in a row, each copy augmented apart (its key holds
                        the copy), the epoch cut to len // 256 * 256 / world_size samples per
                        rank as RASampler cuts it; not with streamed shards. Fewer than 256
                        samples (or a rank with none) is a stoker.Error. 1 (default): off
      plan              a stoker.Plan; None: this process's (the plugin's STOKER_* plan, else
                        one computed here for this batch size). Either way its depths are
                        fitted to the batch and held_batches within its memory budget.
                        None under the plugin also applies the plan to the calling thread,
                        as stoker.plan() does (main CPUs, torch's intra-op threads)
      to_device         None, or a torch device ('cuda', 'cuda:1'): batches arrive there.
                        The batch slots are page-locked (cudaHostRegister, through torch);
                        each batch is copied on the loader's own CUDA stream while the
                        loop works on the previous one, and the loop's current stream
                        waits for that copy before using the tensors. The caller's
                        current device and stream are left alone; indices stay on the
                        host. ValueError when PyTorch has no such device. A slot that
                        cannot be pinned is a note in stats()['notes'] (and a warning):
                        the copies then run from pageable memory, slower
      as_numpy          yield numpy arrays instead of torch tensors (host memory: not with
                        to_device, a ValueError)
      return_indices    yield (data, labels, indices) with the dataset indices
      agree             check at each epoch start that every rank agrees on seed, epoch,
                        dataset and options: over MPI (the C++ side), else over
                        torch.distributed when it is initialised (a collective either
                        way); stats()['agreement'] says which. False for a loader that one
                        rank uses alone (an evaluation loader on rank 0); world_size=1
                        enters no collective either
    """

    def __init__(self, kind, source, *, batch_size, shuffle=True, seed=0, drop_last=False,
                 world_size=None, rank=None, workers=None, prefetch=None, adaptive=True,
                 max_depth=0, held_batches=2, pin_threads=True, on_corrupt="error",
                 max_skip_fraction=0.01, shuffle_buffer=None, ra_reps=1, plan=None,
                 to_device=None, as_numpy=False, return_indices=False, agree=True,
                 _pinner=None):
        # _pinner: private, for the tests of the pinning seam: (pin, unpin) Python callables
        # used instead of torch's cudaHostRegister (py_pinner.hpp says what they receive).
        if plan is not None and not isinstance(plan, Plan):
            raise TypeError(f"plan must be a stoker.Plan or None, got {type(plan).__name__}")
        world_source = None
        if world_size is None and rank is None:  # as torch finds it: the group first
            world = find_world("Loader")
            rank, world_size, world_source = world  # passed on, checked by the C++ side
            if plan is None and world_source.startswith("torch.distributed"):
                plan = _plan_beside_group(world)
        self._agreement = Agreement(rank, world_size, check_bool("agree", agree),
                                    world_source)
        options = {  # checked by the C++ side (options.cpp), each error naming its argument
            "batch_size": batch_size, "shuffle": shuffle, "seed": seed, "drop_last": drop_last,
            "world_size": world_size, "rank": rank,  # given, or as find_world() found them
            "workers": workers, "prefetch": prefetch, "adaptive": adaptive,
            "max_depth": max_depth, "held_batches": held_batches, "pin_threads": pin_threads,
            "on_corrupt": on_corrupt, "max_skip_fraction": max_skip_fraction,
            "shuffle_buffer": shuffle_buffer, "ra_reps": ra_reps,
            "agree": self._agreement.by_mpi,  # the C++ side checks over MPI, this module else
            "plan": None if plan is None else plan._core,
            # Planning here applies the plan as stoker.plan() would: under the plugin only.
            "pin_main_thread": plan is None and _applies_by_default(),
        }
        self._as_numpy = check_bool("as_numpy", as_numpy)
        self._return_indices = check_bool("return_indices", return_indices)
        device = check_device(to_device)
        if device is not None and self._as_numpy:
            raise ValueError(f"as_numpy=True, to_device={to_device!r}: numpy arrays stay in "
                             "host memory; pick one")
        if _pinner is not None:
            options["pinner"] = (*_pinner, "the pinner given to stoker.Loader")
        elif device is not None:
            options["pinner"] = torch_pinner(device)
        self._loop = None  # the _Loop in progress (see LoaderLoop.__iter__)
        self._copies = None  # the device copies (_device.py) with to_device
        self._core = self._make_core(kind, source, options)
        self._dataset = LoaderDataset(kind, source, self._core.dataset_size, self._core.classes)
        if "pinner" in options:
            self._warn_unpinned()
        if device is not None:
            self._copies = DeviceCopies(CudaSide(device), held_batches)  # checked by now
        self._plan = Plan(_stoker.Plan(self._core.plan_handle()), plan.source if plan is not None
                          else self._core.plan_source)
        if options["pin_main_thread"]:
            _apply(self._plan._core, loader_pinned=True)
        if not self._as_numpy:
            self._check_torch_dtype()

    def _make_core(self, kind, source, options):
        """The C++ loader (Loader::open), its image folder listed once per job over
        torch.distributed when there is a group (_listing_share.py)."""
        share = ListingShare.for_loader(kind, source, self._agreement)
        if share is None:
            return _stoker._Loader(kind, source, options)
        try:
            return _stoker._Loader(kind, source, options, folder=share.folder)
        except BaseException as e:
            share.fail(e)  # rank 0 failed before its listing went out: the others are told
            raise

    @property
    def world_source(self):
        """Where rank and world_size came from (the arguments, a torch.distributed group,
        the launcher's variables, MPI)."""
        return self._agreement.world_source or "the arguments (world_size and rank)"

    def stats(self):
        """Where time goes (ns per stage, consumer wait), prefetch depth decisions, slots,
        and the corrupt samples left out: 'skipped' (count), 'skipped_files' (paths);
        'decode_warnings': samples delivered although their decoder warned (as PIL does)."""
        stats = self._core.stats()
        stats["agreement"] = self._agreement.mode
        if self._copies is not None:
            stats["device"] = self._copies.stats()
        return stats

    def close(self):
        """Stops the worker threads now (batches still held stay valid; with to_device,
        the copies in flight are waited for)."""
        if self._copies is not None:
            self._copies.drain()
        self._core.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- properties ---------------------------------------------------------------------
    @property
    def plan(self):
        """The stoker.Plan the loader runs: yours or this process's, its depths fitted to
        the batch (prefetch, prefetch_max)."""
        return self._plan

    @property
    def depth(self):
        """Batches in flight now (the prefetch controller moves it)."""
        return self._core.depth

    @property
    def sample_spec(self):
        """(dtype, shape) of one sample."""
        return self._core.spec

    @property
    def rank(self):
        """This rank, as given or detected (MPI, RANK, SLURM_PROCID)."""
        return self._core.rank

    @property
    def world_size(self):
        return self._core.world_size

    @property
    def dataset_size(self):
        return self._core.dataset_size

    @property
    def dataset(self):
        """What the loader reads, as scripts read torch's DataLoader.dataset: len() (the
        whole dataset's samples), and an image folder's classes and class_to_idx as
        torchvision's ImageFolder has them (None for shards, tokens and records, with the
        reason in dataset.no_classes). A stoker.LoaderDataset (_loader_dataset.py)."""
        return self._dataset

    @property
    def samples_per_epoch(self):
        return self._core.samples_per_epoch

    def __repr__(self):
        return (f"stoker.Loader({self._core.describe}, batches/epoch={len(self)}, "
                f"workers={self.stats()['workers']}, depth={self.depth})")

    # ---- helpers ------------------------------------------------------------------------
    def _warn_unpinned(self):
        """Says once, at construction, when the slots could not be page-locked."""
        for note in self._core.stats()["notes"]:
            if note.startswith("arena not page-locked"):
                warnings.warn(f"stoker.Loader: {note}; batches are copied from pageable "
                              "memory (slower, synchronous)", RuntimeWarning, stacklevel=4)

    def _check_torch_dtype(self):
        import numpy
        import torch

        dtype = self.sample_spec[0]
        try:
            torch.from_numpy(numpy.zeros(1, dtype=dtype))
        except TypeError:
            self._core.close()
            raise ValueError(f"samples of dtype {dtype} cannot be torch tensors in this "
                             f"PyTorch ({torch.__version__}): pass as_numpy=True "
                             "(or widen=True for tokens)") from None


def _plan_beside_group(world):
    """None (the C++ side plans from the launcher's variables), or, when those cannot say
    this rank's place on the node (PyTorch's harness: WORLD_SIZE set, the rank passed to
    init_process_group, no RANK), a plan for local rank `rank` of `world_size`: the
    group's ranks taken as this node's, as under mp.spawn."""
    try:
        _stoker.launch_world()
        return None
    except _stoker.Error:
        pass
    core, source = _stoker.compute_plan(local_rank=world.rank, local_size=world.world_size)
    core.add_reason("ranks", f"local rank {world.rank} of {world.world_size} from "
                    f"{world.source} (the launcher's variables do not say it)")
    return Plan(core, source)
