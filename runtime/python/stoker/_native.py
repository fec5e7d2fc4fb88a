"""The C interface of stoker's runtime (libstoker.so, runtime/capi/stoker_c.h) through ctypes.

One library serves every CPython from 3.9 on, free-threaded builds included: it holds no
Python, so nothing here depends on the interpreter's version. ctypes releases the GIL for
every call into it, so a slow call (opening a loader, waiting for a batch) lets other Python
threads run.

`call(name, args, data, objects)` runs one of the library's named calls: `args` goes as a
JSON object (a path as the hex of its bytes: any file name round-trips), `data` as bytes,
`objects` as handles; it returns (value, bytes, handle). The per-batch calls are typed
(next_batch, release_batch, sampler_indices).

When the library cannot be loaded, importing stoker says why in one line: a missing file, a
native library it needs, a library of another version (inside a container image without the
native libraries, that is what a user meets first).
"""
import ctypes
import json
import os

ABI = 1  # STOKER_ABI in stoker_c.h
LIBRARY = "libstoker.so"
_HERE = os.path.dirname(os.path.abspath(__file__))

OK, ERROR, VALUE_ERROR, TYPE_ERROR, NO_MEMORY, OTHER_ERROR = range(6)
END, NOT_YET = -1, -2


class Error(RuntimeError):
    """stoker's error: a failed sample, disagreeing ranks, a bad dataset. Its message names
    the input at fault, what is wrong with it and what to do."""


Error.__module__ = "stoker"


def loader_next_args(loader_ptr, limit_ns, batch):
    """next_batch's arguments, made once: the loader, the wait's limit, the Batch filled."""
    return ctypes.c_void_p(loader_ptr), ctypes.c_int64(limit_ns), ctypes.byref(batch)


class _Args(ctypes.Structure):
    _fields_ = [("json", ctypes.c_char_p), ("json_len", ctypes.c_size_t),
                ("data", ctypes.c_char_p), ("data_len", ctypes.c_size_t),
                ("objects", ctypes.POINTER(ctypes.c_void_p)), ("n_objects", ctypes.c_size_t)]


class _Out(ctypes.Structure):
    _fields_ = [("json", ctypes.c_void_p), ("json_len", ctypes.c_size_t),
                ("data", ctypes.c_void_p), ("data_len", ctypes.c_size_t),
                ("object", ctypes.c_void_p)]


class Batch(ctypes.Structure):
    """stoker_batch: one batch's views of its slot, until release_batch(handle)."""
    _fields_ = [("handle", ctypes.c_void_p), ("data", ctypes.c_void_p),
                ("labels", ctypes.c_void_p), ("indices", ctypes.c_void_p),
                ("size", ctypes.c_uint64), ("epoch", ctypes.c_uint64), ("number", ctypes.c_uint64)]


PIN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                       ctypes.c_void_p, ctypes.c_size_t)
UNPIN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)


def _load():
    path = os.path.join(_HERE, LIBRARY)
    if not os.path.exists(path):
        raise ImportError(f"stoker: no {LIBRARY} in {_HERE}: install stoker from its wheel or "
                          "package") from None
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        todo = ("a native library it needs is missing: install the stoker wheel, which "
                "bundles them, or the Debian package" if "cannot open shared object" in str(e)
                else "reinstall stoker (the wheel made for this machine's architecture)")
        raise ImportError(f"stoker: its library {LIBRARY} cannot be loaded: {e} ({todo})") \
            from None
    try:
        lib.stoker_abi.restype = ctypes.c_int
        abi = lib.stoker_abi()
    except AttributeError:
        abi = None
    if abi != ABI:
        raise ImportError(f"stoker: its library {path} is of interface version {abi}, and this "
                          f"package needs version {ABI}: reinstall stoker (its files are from "
                          "two releases)") from None
    sig = [("stoker_call", ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_Args),
                                          ctypes.POINTER(_Out)]),
           ("stoker_last_error", ctypes.c_void_p, [ctypes.POINTER(ctypes.c_size_t)]),
           ("stoker_free", None, [ctypes.c_void_p]),
           ("stoker_object_free", None, [ctypes.c_void_p]),
           ("stoker_pinner_new", ctypes.c_int, [PIN, UNPIN, ctypes.c_void_p, ctypes.c_char_p,
                                                ctypes.POINTER(ctypes.c_void_p)]),
           ("stoker_callbacks_off", None, []),
           ("stoker_loader_next", ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64,
                                                 ctypes.POINTER(Batch)]),
           ("stoker_batch_release", None, [ctypes.c_void_p]),
           ("stoker_sampler_indices", ctypes.c_int,
            [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64),
             ctypes.POINTER(ctypes.c_uint64)])]
    for name, restype, argtypes in sig:
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes
    return lib


_lib = _load()
_EXCEPTIONS = {ERROR: Error, VALUE_ERROR: ValueError, TYPE_ERROR: TypeError,
               NO_MEMORY: MemoryError, OTHER_ERROR: RuntimeError}


def raise_status(status):
    """Raises the error of this thread's last failed call (status: what it returned)."""
    size = ctypes.c_size_t()
    text = ctypes.string_at(_lib.stoker_last_error(ctypes.byref(size)), size.value)
    raise _EXCEPTIONS.get(status, RuntimeError)(text.decode("utf-8", "backslashreplace"))


class Handle:
    """One of the library's objects (a plan, a sampler, a loader, a listed folder, a pinner),
    freed when the last reference to it goes."""
    __slots__ = ("ptr", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self, free=_lib.stoker_object_free):
        ptr, self.ptr = self.ptr, None
        if ptr:
            free(ptr)


def path_hex(path):
    """A path (str, bytes or os.PathLike) as the hex of the bytes the OS takes."""
    return os.fsencode(path).hex()


def call(name, args=None, data=None, objects=()):
    """Runs the library's call `name`; returns (value, data, handle), each None when the call
    gives none. Raises its error: stoker.Error, ValueError, TypeError, MemoryError."""
    a = _Args()
    if args:
        text = json.dumps(args).encode()
        a.json, a.json_len = text, len(text)
    if data is not None:
        a.data, a.data_len = bytes(data), len(data)
    if objects:
        ptrs = (ctypes.c_void_p * len(objects))(*(o.ptr for o in objects))
        a.objects, a.n_objects = ptrs, len(objects)
    out = _Out()
    status = _lib.stoker_call(name.encode(), ctypes.byref(a), ctypes.byref(out))
    if status != OK:
        raise_status(status)
    value = blob = None
    if out.json:
        value = json.loads(ctypes.string_at(out.json, out.json_len))
        _lib.stoker_free(out.json)
    if out.data:
        blob = ctypes.string_at(out.data, out.data_len)
        _lib.stoker_free(out.data)
    return value, blob, Handle(out.object) if out.object else None


def value(name, args=None, data=None, objects=()):
    """The value of call(...), for calls that return only one."""
    return call(name, args, data, objects)[0]


_info = None


def info():
    """The library's facts (its "info" call: build, limits, the tables), read once."""
    global _info
    if _info is None:
        _info = value("info")
    return _info


# The per-batch call without argument types: its arguments are made once per loader as ctypes
# objects (loader_next_args), so no call converts them again (its C signature is in the table).
next_batch = _lib["stoker_loader_next"]
next_batch.restype = ctypes.c_int
release_batch = _lib.stoker_batch_release
sampler_indices = _lib.stoker_sampler_indices
pinner_new = _lib.stoker_pinner_new
callbacks_off = _lib.stoker_callbacks_off
library_path = os.path.join(_HERE, LIBRARY)
