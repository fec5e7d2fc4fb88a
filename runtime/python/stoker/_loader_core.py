"""_Loader: the C++ loader as the package's Loader drives it, through the C library.

Its arguments are checked here, each against its row of the C++ options tables
(loader_fields.cpp, image_fields.cpp) or by the checks of _arguments.py, before anything is
opened: a bad one is a TypeError or ValueError naming it. The dataset itself is opened by the
library's one owner (open_dataset: folder or shards, the listing once per job, the
transform, whether shards stream by the one plan the loader runs).

Waiting for a batch happens in slices of the C call (stoker_loader_next with a limit): ctypes
releases the GIL for each, so Python threads (and the training step's own C++ ops) run while
the workers fill slots, and between two slices the interpreter runs its signal handlers, so
Ctrl-C and a SIGTERM handler that checkpoints act within a slice, not when the batch arrives.
A batch's arrays view its slot without a copy; the slot returns to the pool when the last of
them is freed.
"""
import ctypes
import math
import os
import struct
import weakref

from . import _arguments as arg
from . import _native
from ._native import Error
from . import _notes

__all__ = ["_Loader"]

_SLICE_NS = 20_000_000  # 20 ms: how soon a signal handler runs while a batch is awaited
_info = _native.info()
_LOADER_ROWS = {row["name"]: row for row in _info["loader_fields"]}
_next_batch, _ref = _native.next_batch, weakref.ref
# stoker_batch's seven fields (handle, data, labels, indices, size, epoch, number) in one read
_BATCH_FIELDS = struct.Struct("7Q").unpack_from
assert _BATCH_FIELDS.__self__.size == ctypes.sizeof(_native.Batch)
_OK, _END, _NOT_YET = _native.OK, _native.END, _native.NOT_YET
_exit_hook = False
_numpy = None  # imported on the first batch: `import stoker` does not import numpy


def _world(options):
    world_size, rank = options.get("world_size"), options.get("rank")
    if (world_size is None) != (rank is None):
        raise ValueError(f"world_size={world_size!r}, rank={rank!r}: give both or neither")
    if world_size is None:
        return None, None
    arg.check_int("world_size", world_size, 1, allow_none=True)
    return world_size, arg.check_int("rank", rank, 0, world_size - 1)


def loader_options(options):
    """The loader's options (stoker.Loader's keywords), checked, as the library takes them."""
    out = {}
    out["world_size"], out["rank"] = _world(options)
    for key, value in options.items():
        if key in ("world_size", "rank"):
            continue
        if key == "pin_main_thread":  # the package's own
            out[key] = bool(value)
            continue
        row = _LOADER_ROWS.get(key)
        if row is None:
            raise TypeError(f"Loader: unknown option {key}")
        out[key] = arg.by_row(row, value)
    return out


def _image_source(source):
    root, shards = source["root"], source["shards"]
    stream, labels = source["stream"], source["labels"]
    if (root is None) == (shards is None):
        raise ValueError(f"root={root!r}, shards={shards!r}: give exactly one of them")
    out = {"root": None, "shards": None, "stream": None, "labels": True}
    if root is not None:
        if stream is not None or labels is not True:
            raise ValueError(f"stream={stream!r}, labels={labels!r}: these apply to tar shards, "
                             "not to an image folder")
        out["root"] = arg.path("root", root, "folder").hex()
    else:
        out["shards"] = [p.hex() for p in arg.paths("shards", shards, ".tar file or folder")]
        if stream is not None:
            out["stream"] = arg.boolean("stream", stream)
        out["labels"] = arg.boolean("labels", labels)
    transform = {k: v for k, v in source.items() if k not in ("root", "shards", "stream", "labels")}
    out.update(arg.image_options(transform))
    return out


def _token_source(source):
    paths = [p.hex() for p in arg.paths("path", source["path"], "token file or folder")]
    seq_len = arg.check_int("seq_len", source["seq_len"], 1, 2**31)
    dtype = source["dtype"]
    if dtype is not None:
        dtype = arg.choice("dtype", dtype, ("uint16", "uint32"))
    return {"paths": paths, "seq_len": seq_len, "dtype": dtype,
            "widen": arg.boolean("widen", source["widen"])}


def _record_source(source):
    record_bytes = arg.check_int("record_bytes", source["record_bytes"], 1)
    dtype = arg.choice("dtype", source["dtype"],
                       ("uint8", "uint16", "uint32", "int64", "float16", "float32"))
    shape = source["shape"]
    if shape is not None:
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
            raise TypeError(f"shape must be a sequence of ints, got {shape!r}")
        shape = [arg.check_int(f"shape[{i}]", d, 1) for i, d in enumerate(shape)]
    labels = source["labels_path"]
    return {"record_bytes": record_bytes, "dtype": dtype, "shape": shape,
            "path": arg.path("path", source["path"], "file").hex(),
            "labels_path": None if labels is None else arg.path("labels_path", labels,
                                                                 "file").hex()}


_SOURCES = {"images": _image_source, "tokens": _token_source, "records": _record_source}


def _pinner(spec):
    """A pinner object of the library from (pin, unpin, description): Python callables that
    page-lock the batch slots (_device.torch_pinner). A failed pin is a note, not an error."""
    pin, unpin, description = spec

    def on_pin(_ctx, base, size, why, why_size):
        try:
            result = pin(base, size)
            if result is None or int(result) == 0:
                return 0
            text = f"returned error code {int(result)}"
        except BaseException as e:  # noqa: B902 (a note, as the C++ side said it)
            text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        ctypes.memmove(why, text.encode()[:why_size - 1] + b"\0", min(len(text) + 1, why_size))
        return 1

    def on_unpin(_ctx, base):
        try:
            unpin(base)
        except BaseException as e:  # noqa: B902 (the memory is freed next; say so)
            _notes.note(f"stoker.Loader unpinning its batch slots: {type(e).__name__}: {e}")

    callbacks = (_native.PIN(on_pin), _native.UNPIN(on_unpin))
    global _exit_hook
    if not _exit_hook:  # no callback into an interpreter that is shutting down
        import atexit

        atexit.register(_native.callbacks_off)
        _exit_hook = True
    ptr = ctypes.c_void_p()
    status = _native.pinner_new(callbacks[0], callbacks[1], None, description.encode(),
                                ctypes.byref(ptr))
    if status != _native.OK:
        _native.raise_status(status)
    return _native.Handle(ptr.value), callbacks


# Batches whose arrays are alive: handle -> its _Release. A module-level registry, so that
# the weak references stay reachable (and their callbacks run) whatever else is collected,
# the loader itself included: a batch may outlive its loader.
_LIVE = {}


class _Release:
    """Returns a batch's slot to the pool once its arrays are freed (the callback of a weak
    reference to each)."""
    __slots__ = ("handle", "left", "refs", "keep")

    def __call__(self, _ref, release=_native.release_batch, live=_LIVE):
        self.left -= 1
        if self.left == 0:
            live.pop(self.handle, None)
            release(self.handle)


def _slot_views(b, capacity, sample_shape, dtype, label=("int64", ())):
    """Arrays over a whole slot (data, labels, indices for `capacity` samples), made once per
    slot: a batch's arrays are slices of them. `label`: one sample's label (dtype, shape):
    int64, or a mixed batch's float32 row of its classes."""
    global _numpy
    if _numpy is None:
        import numpy

        _numpy = numpy
    np = _numpy
    item = np.dtype(dtype).itemsize
    per_sample = item * math.prod(sample_shape)

    def over(address, count, kind):
        if not address or count == 0:
            return np.zeros(0, dtype=kind)
        raw = (ctypes.c_char * (count * np.dtype(kind).itemsize)).from_address(address)
        return np.frombuffer(raw, dtype=kind)

    data = over(b.data, capacity * per_sample // item, dtype).reshape((-1,) + sample_shape)
    label_dtype, label_shape = label
    labels = over(b.labels, capacity * math.prod(label_shape), label_dtype)
    if label_shape:
        labels = labels.reshape((-1,) + label_shape)
    return data, labels, over(b.indices, capacity, np.uint64)


class _Loader:
    """One C++ loader (Loader::open) and the Python side of its consumer calls."""

    def __init__(self, kind, source, options, folder=None):
        """`options`: stoker.Loader's keywords, plus the package's own plan (a core Plan),
        pinner ((pin, unpin, description)) and pin_main_thread. `folder`: None, or a callable
        that gives the image folder listed once per job (_listing_share.py), called once the
        arguments are checked."""
        options = dict(options)
        plan, pinner = options.pop("plan", None), options.pop("pinner", None)
        loader = loader_options(options)  # the loader's arguments first: named before any I/O
        if kind not in _SOURCES:
            raise ValueError(f"kind={kind}: expected images, tokens or records")
        args = {"kind": kind, "source": _SOURCES[kind](source), "loader": loader}
        objects = [] if plan is None else [plan._handle]
        if folder is not None:
            objects.append(folder())
        self._callbacks = None
        if pinner is not None:
            handle, self._callbacks = _pinner(pinner)
            objects.append(handle)
        self._handle = _native.call("loader_open", args, objects=objects)[2]
        self._batch = _native.Batch()
        self._next_args = _native.loader_next_args(self._handle.ptr, _SLICE_NS, self._batch)
        self._consuming = self._close_asked = False
        info = self._info()
        self.dataset_size, self.describe = info["dataset_size"], info["describe"]
        self.classes = info["classes"]
        self.spec = (info["dtype"], list(info["shape"]))
        self._sample_shape, self._dtype = tuple(info["shape"]), info["dtype"]
        self._capacity = info["batch_size"]
        self._label = (info["label_dtype"], tuple(info["label_shape"]))
        self._slots = {}  # a slot's data address -> its arrays

    def _call(self, name, args=None):
        return _native.call(name, args, objects=(self._handle,))


    def _info(self):
        return self._call("loader_info")[0]

    def next(self, indices=True):
        """The next batch as (data, labels, indices, epoch, number) arrays (indices None unless
        asked for), or None at the end of the epoch (or when a signal handler closed the
        loader while it waited). A Python exception from a signal handler (KeyboardInterrupt,
        SystemExit) leaves it; the batch waited for is not lost."""
        if self._consuming:
            raise Error("stoker.Loader: was iterated from a signal handler while it waits for a "
                        "batch (in the handler, save state_dict() or set a flag; leave the loop "
                        "by raising an exception (KeyboardInterrupt, SystemExit) or call close())")
        args = self._next_args
        self._consuming = True
        try:
            status = _next_batch(*args)
            while status == _NOT_YET:  # between two slices the signal handlers run
                if self._close_asked:  # a handler called close() during the wait
                    break
                status = _next_batch(*args)
        except BaseException:
            self._call("loader_interrupt")  # destroying it need not wait for the samples
            raise
        finally:
            self._consuming = False
        if status != _OK:
            if status == _NOT_YET:
                self.close()
                return None
            if status == _END:
                return None
            _native.raise_status(status)
        # The batch's data, labels and indices: slices of its slot's arrays, no copy; the
        # slot returns to the pool once the three are freed (_Release). The arrays are
        # writable only because torch.from_numpy warns about read-only ones.
        handle, address, _, _, n, epoch, number = _BATCH_FIELDS(self._batch)
        slot = self._slots.get(address)
        if slot is None:
            slot = self._slots[address] = _slot_views(self._batch, self._capacity,
                                                      self._sample_shape, self._dtype,
                                                      self._label)
        data, labels = slot[0][:n], slot[1][:n]
        rel = _Release()
        rel.handle, rel.keep = handle, self._callbacks
        if indices:
            indices = slot[2][:n]
            rel.left, rel.refs = 3, (_ref(data, rel), _ref(labels, rel), _ref(indices, rel))
        else:
            indices = None
            rel.left, rel.refs = 2, (_ref(data, rel), _ref(labels, rel))
        _LIVE[handle] = rel
        return data, labels, indices, epoch, number

    def close(self):
        """Stops and joins the workers now; batches still held stay valid. Called by a signal
        handler while next() waits, it closes when next() returns (None)."""
        if self._consuming:
            self._close_asked = True
            return
        if self._handle is not None:
            self._call("loader_close")

    def start_epoch(self):
        self._call("loader_start_epoch")

    def set_epoch(self, epoch):
        self._call("loader_set_epoch", {"epoch": arg.check_int("epoch", epoch, 0, 2**64 - 1)})

    def state(self, held_back=0):
        return self._call("loader_state", {"held_back": held_back})[0]

    def restore(self, text):
        self._call("loader_restore", {"text": text})

    def loop_view(self, comm_rank):
        return self._call("loader_loop_view", {"comm_rank": comm_rank})[0]

    def stats(self):
        stats = self._call("loader_stats")[0]
        stats["skipped_files"] = [os.fsdecode(bytes.fromhex(h))
                                  for h in stats.pop("skipped_files_hex")]
        return stats

    def plan_handle(self):
        """The plan the loader runs, as the library's handle (a copy)."""
        return self._call("loader_plan")[2]

    epoch = property(lambda self: self._info()["epoch"])
    next_loop_epoch = property(lambda self: self._info()["next_loop_epoch"])
    batches_per_epoch = property(lambda self: self._info()["batches_per_epoch"])
    samples_per_epoch = property(lambda self: self._info()["samples_per_epoch"])
    rank = property(lambda self: self._info()["rank"])
    world_size = property(lambda self: self._info()["world_size"])
    depth = property(lambda self: self._info()["depth"])
    plan_source = property(lambda self: self._info()["plan_source"])

