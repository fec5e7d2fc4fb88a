"""stoker.Loader: the C++ loader (pinned worker threads, recycled batch slots, adaptive
prefetch, distributed sampler) as a PyTorch iterable. The arguments that reach the C++ loader
are checked there, once (runtime/python/src/arguments.cpp); this module checks only what
stays in Python (plan, agree, to_device, as_numpy, return_indices)."""
import warnings

from . import _stoker
from ._agree import Agreement
from ._checks import check_bool
from ._device import CudaSide, DeviceCopies, check_device, torch_pinner
from ._plan import Plan, _applies_by_default, _apply

__all__ = ["Loader"]


class _Loop:
    """A loop in progress: its epoch, the batches it took, and whether set_epoch() or
    load_state_dict() since let another loop replace it."""

    def __init__(self, epoch):
        self.epoch, self.batches, self.replaceable = epoch, 0, False
        self.ahead = 0  # batches taken from the C++ loader, not yet handed to the loop


class Loader:
    """Iterate it for (data, labels) batches: torch tensors that view the loader's batch
    slot without a copy. A slot returns to the pool when its tensors are freed; keep at most
    `held_batches` batches alive beyond the loop variable (else stoker.Error, not a hang).

    Build one with Loader.images(...), Loader.tokens(...) or Loader.records(...). Options
    shared by all three (keyword only):
      batch_size        samples per batch (> 0)
      shuffle, seed     the epoch order: a pure function of (seed, epoch, dataset size)
      drop_last         drop the last partial batch (and the uneven tail across ranks)
      world_size, rank  this rank's shard; both None: from MPI, RANK/WORLD_SIZE or
                        SLURM_PROCID/SLURM_NTASKS
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
                 max_skip_fraction=0.01, shuffle_buffer=None, plan=None, to_device=None,
                 as_numpy=False, return_indices=False, agree=True, _pinner=None):
        # _pinner: private, for the tests of the pinning seam: (pin, unpin) Python callables
        # used instead of torch's cudaHostRegister (py_pinner.hpp says what they receive).
        if plan is not None and not isinstance(plan, Plan):
            raise TypeError(f"plan must be a stoker.Plan or None, got {type(plan).__name__}")
        if world_size is None and rank is None:
            world = _stoker.world()  # what the C++ side detects too (MPI, RANK, SLURM_*)
            ranks = world["rank"], world["world_size"]
        else:
            ranks = rank, world_size  # checked by the C++ side
        self._agreement = Agreement(*ranks, check_bool("agree", agree))
        options = {  # checked by the C++ side (options.cpp), each error naming its argument
            "batch_size": batch_size, "shuffle": shuffle, "seed": seed, "drop_last": drop_last,
            "world_size": world_size, "rank": rank,  # both None: detected by the C++ side
            "workers": workers, "prefetch": prefetch, "adaptive": adaptive,
            "max_depth": max_depth, "held_batches": held_batches, "pin_threads": pin_threads,
            "on_corrupt": on_corrupt, "max_skip_fraction": max_skip_fraction,
            "shuffle_buffer": shuffle_buffer,
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
        self._loop = None  # the _Loop in progress (see __iter__)
        self._copies = None  # the device copies (_device.py) with to_device
        self._core = _stoker._Loader(kind, source, options)  # Loader::for_this_process
        if "pinner" in options:
            self._warn_unpinned()
        if device is not None:
            self._copies = DeviceCopies(CudaSide(device), held_batches)  # checked by now
        self._plan = Plan(self._core.plan, plan.source if plan is not None
                          else self._core.plan_source)
        if options["pin_main_thread"]:
            _apply(self._plan._core, loader_pinned=True)
        if not self._as_numpy:
            self._check_torch_dtype()

    # ---- constructors -------------------------------------------------------------------
    @classmethod
    def images(cls, root=None, *, shards=None, stream=None, labels=True, batch_size=64, size=224,
               train=True, dtype="float32", layout="CHW", resize_shorter=256, scale=(0.08, 1.0),
               ratio=(3 / 4, 4 / 3), flip_p=0.5, mean=(0.485, 0.456, 0.406),
               std=(0.229, 0.224, 0.225), antialias=True, dct_scaling=True, **options):
        """An image folder (root/<class>/<image>.jpg, classes sorted by name as torchvision's
        ImageFolder), or WebDataset-style tar `shards` (a path or a list of .tar, .tar.gz,
        .tar.zst files or folders of them; <key>.jpg|png + <key>.cls|cls2|txt members),
        through RandomResizedCrop + flip + Normalize (train=True) or
        Resize(resize_shorter) + CenterCrop(size) + Normalize (train=False).
        Images are files named .jpg, .jpeg or .png (any case); their first bytes choose the
        decoder, and every JPEG and PNG kind gives PIL's Image.open(f).convert('RGB') pixels
        (grey, CMYK, YCCK, 16-bit, palette, alpha dropped).
        stream: read the shards as streams (whole shards, 4 MiB reads, a shuffle buffer);
        None: when the plan's profile says Stream=yes, or a shard is compressed.
        labels=False reads shards without label members (every label -1); with labels=True a
        sample without one, or with one outside 0..2^31-1, is a stoker.Error.
        dtype float32/float16 (normalized) or uint8 (0..255, not normalized); layout CHW/HWC.
        Resampling is bilinear, antialiased when downscaling (as PIL). dct_scaling lets the
        JPEG decoder shrink by 2, 4 or 8 first when the crop is that much larger than `size`
        (faster; pixels then differ slightly from a full decode + resize).
        """
        source = {"root": root, "shards": shards, "stream": stream, "labels": labels,
                  "train": train, "size": size, "resize_shorter": resize_shorter,
                  "scale": scale, "ratio": ratio, "flip_p": flip_p, "mean": mean, "std": std,
                  "dtype": dtype, "layout": layout, "antialias": antialias,
                  "dct_scaling": dct_scaling}
        return cls("images", source, batch_size=batch_size, **options)

    @classmethod
    def tokens(cls, path, *, seq_len=2048, batch_size=16, dtype=None, widen=True, **options):
        """Token files: flat uint16/uint32 token ids, or one-dimensional .npy arrays. `path`
        is a file, a folder (its files in name order: one set) or a list of them. Sample i
        is a window of seq_len + 1 tokens (stride seq_len; inputs = w[:-1], targets =
        w[1:]); windows never straddle two files. dtype: None takes the .npy headers'
        (uint16 for raw files); every file of a set must hold the same type. widen=True
        (default) yields int64 windows, the dtype embeddings take; widen=False yields the
        raw tokens (only with as_numpy=True: PyTorch has no uint16/uint32 tensors)."""
        source = {"path": path, "seq_len": seq_len, "dtype": dtype, "widen": widen}
        return cls("tokens", source, batch_size=batch_size, **options)

    @classmethod
    def records(cls, path, *, record_bytes, batch_size, dtype="uint8", shape=None,
                labels_path=None, **options):
        """A file of fixed-size binary records; `shape`/`dtype` say how to view one (default
        (record_bytes,) uint8); labels from an optional file of int64 (numpy .tofile)."""
        source = {"path": path, "record_bytes": record_bytes, "labels_path": labels_path,
                  "dtype": dtype, "shape": shape}
        return cls("records", source, batch_size=batch_size, **options)

    # ---- iteration ----------------------------------------------------------------------
    def __iter__(self):
        """One loop over the epoch set_epoch() named (or the next one). A loop is in progress
        from its first batch until its iterator is exhausted, raises, or is closed:
        it.close(), or when the iterator is garbage-collected, which CPython does as soon as
        a `for` loop that owns it exits early (break, return, an exception). Starting another
        loop while one is in progress is a stoker.Error, unless set_epoch() or
        load_state_dict() came in between: then the new loop replaces the old one, whose
        iterator raises stoker.Error if used again."""
        core, copies = self._core, self._copies
        loop = self._begin_loop()
        try:
            self._agreement.check(core.loop_view, core.next_loop_epoch)  # collective
            core.start_epoch()
            loop.epoch = core.epoch
            queued = None  # to_device: the batch whose copy runs, not yet handed over
            while True:
                if copies is not None:
                    copies.make_room()
                views = core.next()  # releases the GIL while waiting
                if views is None:
                    break
                loop.batches += 1
                if copies is None:
                    batch = self._convert(views)
                else:  # queue this batch's copy, hand over the one queued before
                    batch, queued = queued, copies.queue(views)
                    loop.ahead = 1
                del views  # the slot's views: with to_device, only the pending copy holds them
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

    def stats(self):
        """Where time goes (ns per stage, consumer wait), prefetch depth decisions, slots,
        and the corrupt samples left out: 'skipped' (count), 'skipped_files' (paths)."""
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

    def _convert(self, views):
        data, labels, indices, _epoch, _number = views
        if not self._as_numpy:
            import torch

            data, labels = torch.from_numpy(data), torch.from_numpy(labels)
            indices = torch.from_numpy(indices.view("int64"))
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
