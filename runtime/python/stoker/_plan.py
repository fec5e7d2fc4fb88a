"""stoker.plan(): this process's plan, and the PyTorch DataLoader settings it implies."""
import math
import os
import sys
import warnings

from . import _notes, _stoker, _torch_kwargs
from ._checks import check_int
from ._workers import WorkerInit

__all__ = ["Plan", "plan"]

# The plan's fields: every row of the C++ table (plan_fields.hpp: name, STOKER_* variable,
# an example value), then the CPU lists as lists and the reasons.
_FIELDS = tuple(name for name, _env, _example in _stoker.plan_fields) + (
    "cpu_list", "main_cpu_list", "worker_cpu_list", "reasons")


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


class Plan:
    """A rank's plan: its CPUs, loader workers, prefetch depth, memory budget, GPU and NICs,
    each decision with a one-line reason. Get it with stoker.plan()."""

    def __init__(self, core, source):
        self._core = core
        # "the STOKER_* environment" (under the SPANK plugin) or "computed on <machine>"
        self.source = source

    def reason(self, field):
        """The reasons for `field` ("workers", "prefetch", ...) joined with '; '."""
        return self._core.reason(field)

    def to_env(self):
        """The STOKER_* variables that describe this plan (a dict)."""
        return dict(self._core.to_env())

    def worker_shares(self, workers=None):
        """The CPU list of each of `workers` workers (default: the plan's), by the C++
        loader's rule: the plan's worker CPUs split among them; more workers than worker
        CPUs spread over all the rank's CPUs, one each, worker CPUs first."""
        n = self.workers if workers is None else check_int("workers", workers, 1, 2**31 - 1)
        return _stoker.worker_shares(self._core, n)

    def torch_prefetch_factor(self, workers=None):
        """PyTorch's per-worker prefetch_factor for this plan and `workers` DataLoader
        workers (default: the plan's): ceil(prefetch / workers), at least 1. The plan's
        depth is for the whole rank and torch's is per worker, so the rank keeps
        workers x factor batches in flight: the fewest at or above prefetch. torch cannot
        grow its depth, so prefetch_max does not enter. The one conversion: used by
        torch_dataloader_kwargs() and sbatch_templates/pytorch_ddp_train.py."""
        n = self.workers if workers is None else int(workers)
        if n < 1:
            raise ValueError(f"workers={n}: torch's prefetch_factor needs 1 or more workers")
        return max(1, math.ceil(self.prefetch / n))

    def torch_dataloader_kwargs(self, worker_init_fn=None, *, num_workers=None,
                                pin_memory=None, prefetch_factor=None, persistent_workers=None):
        """Keyword arguments for torch.utils.data.DataLoader:

        num_workers        the plan's workers;
        prefetch_factor    torch_prefetch_factor(): per worker, ceil(plan.prefetch /
                           workers), at least 1 (the plan's depth is for the whole rank,
                           torch's is per worker);
        persistent_workers True (workers live across epochs);
        pin_memory         True when the plan has a GPU and pins memory;
        pin_memory_device  'cuda' with pin_memory (where this torch's DataLoader takes it),
                           so the pinned batches are for the plan's GPU type;
        worker_init_fn     pins worker i to its share (worker_shares()) and seeds random and
                           numpy per worker, then calls `worker_init_fn` (yours) if given.

        With num_workers == 0 only num_workers and pin_memory are returned (torch refuses
        prefetch_factor and persistent_workers without workers).

        Your own settings (keyword only; None: the plan's) win: `num_workers` (an int from 0
        to the loader's limit, 1024), `pin_memory` and `persistent_workers` (True or False),
        `prefetch_factor` (an int >= 1), e.g. torch_dataloader_kwargs(num_workers=args.workers).
        The rest follows the workers in use: prefetch_factor torch_prefetch_factor(num_workers)
        unless given, and worker_shares(num_workers). One line on stderr names each setting
        you gave that differs from the plan's, with the plan's value. TypeError for a value of
        the wrong type, ValueError for one out of range, for prefetch_factor with num_workers=0
        and for persistent_workers=True with num_workers=0, each naming the argument (torch's
        DataLoader refuses those too).
        """
        planned = self._torch_kwargs(max(0, int(self.workers)),
                                     bool(self.gpu) and bool(self.pin_memory), worker_init_fn)
        given = _torch_kwargs.checked({"num_workers": num_workers, "pin_memory": pin_memory,
                                       "prefetch_factor": prefetch_factor,
                                       "persistent_workers": persistent_workers})
        if not given:
            return planned
        kwargs = self._torch_kwargs(given.get("num_workers", planned["num_workers"]),
                                    given.get("pin_memory", planned["pin_memory"]),
                                    worker_init_fn)
        kwargs.update(given)
        _torch_kwargs.differences(given, planned, kwargs)
        return kwargs

    def _torch_kwargs(self, workers, pin, worker_init_fn):
        """The DataLoader's keyword arguments for `workers` workers and pinning `pin`."""
        kwargs = {"num_workers": workers, "pin_memory": pin}
        if pin and self.gpu and _dataloader_takes("pin_memory_device"):
            kwargs["pin_memory_device"] = "cuda"
        if workers == 0:
            return kwargs
        kwargs["prefetch_factor"] = self.torch_prefetch_factor(workers)
        kwargs["persistent_workers"] = True
        kwargs["worker_init_fn"] = WorkerInit(self.worker_shares(workers), worker_init_fn)
        return kwargs

    def __eq__(self, other):
        return isinstance(other, Plan) and self._core == other._core

    __hash__ = None

    def __repr__(self):
        gpu = repr(self.gpu) if self.gpu else "None"
        lines = [
            f"stoker.Plan(source={self.source!r}, profile={self.profile!r}, "
            f"local_rank={self.local_rank}, local_size={self.local_size},",
            f"  cpus={self.cpus!r}, main_cpus={self.main_cpus!r}, "
            f"worker_cpus={self.worker_cpus!r}, numa={self.numa!r},",
            f"  workers={self.workers}, prefetch={self.prefetch}, "
            f"prefetch_max={self.prefetch_max}, "
            f"mem_budget={self.mem_budget} ({_size(self.mem_budget)}), "
            f"pin_memory={self.pin_memory}, gpu={gpu}, nics={self.nics!r}",
        ]
        if self.reasons:
            lines[-1] += ","
            lines.append("  reasons:")
            lines += [f"    {field}: {text}" for field, text in self.reasons]
        return "\n".join(lines) + ")"


def _dataloader_takes(name):
    """Whether torch.utils.data.DataLoader has keyword `name` (pin_memory_device: 1.12+)."""
    import inspect

    import torch.utils.data

    return name in inspect.signature(torch.utils.data.DataLoader.__init__).parameters


def _core_property(name):
    return property(lambda self: getattr(self._core, name), doc=f"the plan's {name}")


for _name in _FIELDS:
    setattr(Plan, _name, _core_property(_name))


# torch's intra-op thread count when stoker was imported after torch: a later different
# count was set by the user (torch.set_num_threads), not torch's default. None: torch was
# not imported yet, so only OMP_NUM_THREADS / MKL_NUM_THREADS tell a user's setting.
_TORCH_THREADS_AT_IMPORT = (sys.modules["torch"].get_num_threads() if "torch" in sys.modules
                            else None)


_WARNED_THREADS = False  # the replaced user setting was said (once per process)


def _user_thread_setting(have):
    """What the user set that torch's `have` intra-op threads come from, or None."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            return f"{var}={os.environ[var]} in the environment"
    if _TORCH_THREADS_AT_IMPORT is not None and have != _TORCH_THREADS_AT_IMPORT:
        return f"an earlier torch.set_num_threads({have})"
    return None


def _follow_torch_threads(core):
    """Sets torch's intra-op threads to the plan's main CPUs (torch imported); the note."""
    want = _stoker.main_threads(core)
    torch = sys.modules.get("torch")
    if torch is None:
        return f"torch not imported: its intra-op threads not set (the plan gives {want})"
    have = torch.get_num_threads()
    if have == want:
        return f"torch intra-op threads {want} (one per main CPU), unchanged"
    user = _user_thread_setting(have)
    torch.set_num_threads(want)
    note = f"torch intra-op threads {have} -> {want} (one per main CPU)"
    global _WARNED_THREADS
    if user and not _WARNED_THREADS:  # once per process: later plans say it in their reasons
        _WARNED_THREADS = True
        warnings.warn(f"stoker: {note}, replacing {user}; pass apply=False to stoker.plan() "
                      "(or a plan to stoker.Loader) to keep yours", RuntimeWarning, stacklevel=4)
    return note


def _applies_by_default():
    """Applying a plan is the default under the SPANK plugin only (its plan is the task's)."""
    return "STOKER_PLAN_VERSION" in os.environ


def _apply(core, loader_pinned=False):
    """Applies a plan to this thread: pins it to the plan's main CPUs (unless the loader
    factory just did, `loader_pinned`), then makes torch's intra-op threads follow them (a
    pool torch starts afterwards inherits the pin). Adds the notes to the plan's reasons, and
    with STOKER_VERBOSE=1 prints one line on stderr (the factory printed its pin itself).
    Never raises for a mask the thread cannot take."""
    main = None if loader_pinned else _stoker.pin_main_thread(core)[1]
    torch = _follow_torch_threads(core)
    core.add_reason("torch_threads", torch)
    if os.environ.get(_stoker.VERBOSE_VAR) == "1":
        rank = _stoker.launch_rank()
        applied = torch if main is None else f"{main}; {torch}"
        _notes.note(f"stoker: rank {rank}: applied the plan: {applied}")


def plan(environ=None, apply=None):
    """This process's plan.

    Under the SPANK plugin (STOKER_PLAN_VERSION is set) it is read from the STOKER_*
    variables; a present but garbled or missing one raises ValueError naming it. Otherwise
    it is computed here from the process's CPU mask, GPUs and memory limit; STOKER_*
    variables without STOKER_PLAN_VERSION are then ignored with a warning.
    `environ`: a mapping to read instead of os.environ.

    `apply`: also apply the plan to the calling thread, the training loop's: pin it to the
    plan's main CPUs (threads it starts later, such as torch's intra-op pool, inherit
    them), and, when torch is imported, torch.set_num_threads(one per main CPU), with a
    RuntimeWarning (once per process) when that replaces a count the user set
    (OMP_NUM_THREADS or MKL_NUM_THREADS in the environment, or an earlier
    torch.set_num_threads when torch was imported before stoker). A mask the thread cannot take is a note, never an error.
    What was done is in the plan's reasons ("main_thread", "torch_threads") and, with
    STOKER_VERBOSE=1, on one stderr line. None (the default): apply under the plugin
    (STOKER_PLAN_VERSION in os.environ, `environ` not given), not otherwise.
    """
    env = dict(os.environ if environ is None else environ)
    core = _stoker.plugin_plan(env)
    if core is not None:
        # Made again here (a launcher's worker, a narrower binding): its "source" reason says how.
        made_here = [t for f, t in core.reasons if f == "source" and t.startswith("computed")]
        result = Plan(core, made_here[-1] if made_here else "the STOKER_* environment")
    else:
        computed, source = _stoker.compute_plan()
        stray = sorted(set(env) & set(computed.to_env()))
        if stray and "STOKER_PLAN_VERSION" not in env:  # another release's: said in C++
            warnings.warn(f"stoker: {', '.join(stray)} set without STOKER_PLAN_VERSION (not a "
                          "plan from the stoker plugin): ignored, the plan is computed for "
                          "this process", RuntimeWarning, stacklevel=2)
        result = Plan(computed, source)
    if apply is None:
        apply = environ is None and _applies_by_default()
    if apply:
        _apply(result._core)
    return result
