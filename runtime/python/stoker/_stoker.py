"""stoker's runtime as the package's modules use it: the C library's calls (_native.py) under
Python names, with the arguments that come from users checked first (_arguments.py). The
loader's core is in _loader_core.py. Everything here is an implementation detail: use the
`stoker` package."""
from . import _arguments, _native
from ._arguments import check_bool, check_int
from ._native import Error  # noqa: F401

_info = _native.info()
built_with_cuda = _info["built_with_cuda"]  # this build has its CUDA parts (not this library)
built_with_mpi = _info["built_with_mpi"]
# Loader(to_device='cuda') page-locks the slots through torch's cudart and copies them on a
# side stream (_device.py), in every build: it needs only a PyTorch with CUDA.
device_copies = True
plan_fields = tuple(tuple(f) for f in _info["plan_fields"])  # (name, STOKER_* variable, example)
limits = _info["limits"]
VERBOSE_VAR = _info["verbose_var"]

__all__ = ["Error", "check_int", "check_bool"]


def __getattr__(name):
    """_Loader (the loader's core) is imported on first use: `import stoker` stays light."""
    if name == "_Loader":
        from ._loader_core import _Loader

        return _Loader
    raise AttributeError(f"module 'stoker._stoker' has no attribute {name!r}")


def _utf8(text):
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:  # a variable that is not UTF-8: none of stoker's
        return False


class Plan:
    """A rank's plan in the library (use stoker.plan(); this is its core). Its fields are the
    table's (plan_fields.hpp), read once and again after a reason is added."""
    __slots__ = ("_handle", "_info")

    def __init__(self, handle):
        self._handle, self._info = handle, None

    def _read(self):
        if self._info is None:
            self._info = _native.value("plan_info", objects=(self._handle,))
        return self._info

    def __getattr__(self, name):
        info = self._read()
        if name in info["fields"]:
            return info["fields"][name]
        if name in ("cpu_list", "main_cpu_list", "worker_cpu_list"):
            return info[name]
        raise AttributeError(f"stoker plan has no field {name!r}")

    @property
    def reasons(self):
        return [tuple(r) for r in self._read()["reasons"]]

    def reason(self, field):
        return _native.value("plan_reason", {"field": field}, objects=(self._handle,))

    def add_reason(self, field, text):
        """Adds a reason (what applying the plan did)."""
        _native.call("plan_add_reason", {"field": field, "text": text}, objects=(self._handle,))
        self._info = None

    def to_env(self):
        """The STOKER_* variables that describe this plan."""
        return dict(self._read()["env"])

    def __eq__(self, other):
        return isinstance(other, Plan) and _native.value(
            "plan_equal", objects=(self._handle, other._handle))

    __hash__ = None


def plugin_plan(environ):
    """The plan the STOKER_* variables of `environ` describe (under a launcher that started
    several workers in the tuned task, such as torchrun: this worker's share of it); None
    without STOKER_PLAN_VERSION. ValueError naming the variable when one is garbled or
    missing."""
    env = {k: v for k, v in environ.items() if _utf8(k) and _utf8(v)}
    handle = _native.call("plugin_plan", {"env": env})[2]
    return None if handle is None else Plan(handle)


def compute_plan(local_rank=None, local_size=None):
    """(plan, source): a plan computed for this process; local_rank/local_size: this rank's
    place on the node when the launcher's variables do not say it."""
    value, _, handle = _native.call("compute_plan", {"local_rank": local_rank,
                                                     "local_size": local_size})
    return Plan(handle), value["source"]


def split_cpus(cpus, n):
    """The CPU lists of n equal shares of `cpus`."""
    return _native.value("split_cpus", {"cpus": cpus, "n": n})


def worker_shares(plan, workers):
    """The CPU list of each of `workers` workers of `plan`, by the C++ loader's rule."""
    return _native.value("worker_shares", {"n": workers}, objects=(plan._handle,))


def pin_main_thread(plan):
    """(pinned, note): pins the calling thread to the plan's main CPUs and adds the note to
    its reasons; never raises."""
    pinned, note = _native.value("pin_main_thread", objects=(plan._handle,))
    plan._info = None
    return pinned, note


def main_threads(plan):
    """The intra-op threads (torch, OpenMP) the plan's main CPUs give: one per CPU, >= 1."""
    return _native.value("main_threads", objects=(plan._handle,))


def launch_rank():
    """This process's rank as the launcher's variables say; no MPI call."""
    return _native.value("launch_rank")


def launch_world():
    """The launcher's variables alone (no MPI call): rank, world_size, source."""
    return _native.value("launch_world")


def world():
    """The world as the loader detects it (MPI when the launcher is MPI's)."""
    return _native.value("world")


def seed_from_environment(fallback):
    return _native.value("seed_from_environment", {"fallback": fallback})


def check_epoch_views(views, seeds_must_match):
    _native.call("check_epoch_views", {"views": [list(v) for v in views],
                                       "seeds_must_match": bool(seeds_must_match)})


def agree_wait():
    """(warn, timeout) in seconds: STOKER_AGREE_WARN and STOKER_AGREE_TIMEOUT."""
    return tuple(_native.value("agree_wait"))


def agree_waiting_line(rank, epoch, missing, waited):
    return _native.value("agree_waiting_line", {"rank": rank, "epoch": epoch,
                                                "missing": missing, "waited": int(waited)})


def agree_timeout_text(epoch, missing):
    return _native.value("agree_timeout_text", {"epoch": epoch, "missing": missing})


def listing_waiting_line(rank, root, waited):
    return _native.value("listing_waiting_line", {"rank": rank, "root": _native.path_hex(root),
                                                  "waited": int(waited)})


def listing_timeout_text(root):
    return _native.value("listing_timeout_text", {"root": _native.path_hex(root)})


def shared_listing_error(what):
    """Rank 0's listing message when something before the listing failed on it."""
    return _native.call("shared_listing_error", {"what": what})[1]


def list_folder(root):
    """Rank 0's side of one listing per job: (folder handle or None, the message for the
    others, the error's text or None). Send the message whatever happened."""
    value, message, handle = _native.call("folder_list", {"root": _native.path_hex(root)})
    return handle, message, value["failed"]


def take_folder(root, message, rank):
    """Another rank's side: the folder from rank 0's message (stoker.Error with rank 0's
    error when it could not list it)."""
    return _native.call("folder_take", {"root": _native.path_hex(root), "rank": rank},
                        data=message)[2]


def node_name():
    """This node's name (SLURMD_NODENAME, else the host's)."""
    return _native.value("node_name")


def node_copy_problem(folder):
    """"" when this node's files give rank 0's content sample, else what differs (up to 1024
    opens, no stat): run by the first rank of each node but rank 0's."""
    return _native.value("node_copy_problem", objects=(folder,))


def node_copy_error(root, problem):
    """The text every rank raises once a rank's problem with the shared listing is known."""
    return _native.value("node_copy_error", {"root": _native.path_hex(root), "problem": problem})


def rank_list(ranks):
    return _native.value("rank_list", {"ranks": list(ranks)})


def note_unchecked_ranks(rank, world_size):
    return _native.value("note_unchecked_ranks", {"rank": rank, "world_size": world_size})


def crop_box(width, height, seed, epoch, index, options):
    """(x, y, w, h) in source pixels: the train crop of sample (seed, epoch, index), or the
    eval box when options['train'] is False."""
    return tuple(_native.value("crop_box", {"width": width, "height": height, "seed": seed,
                                            "epoch": epoch, "index": index,
                                            "options": _arguments.image_options(options)}))


def flipped(seed, epoch, index, options):
    """Whether the train pipeline flips sample (seed, epoch, index) horizontally."""
    return _native.value("flipped", {"seed": seed, "epoch": epoch, "index": index,
                                     "options": _arguments.image_options(options)})


def decode_image(data):
    """The file's bytes decoded as the image pipeline decodes them: an HxWx3 uint8 array
    (RGB), as PIL's Image.open(f).convert('RGB'). stoker.Error when it cannot be decoded."""
    import numpy

    (height, width), pixels, _ = _native.call("decode_image", data=bytes(data))
    return numpy.frombuffer(bytearray(pixels), dtype=numpy.uint8).reshape(height, width, 3)


def augment_tables():
    """The augmentations' names and interpolations (stoker.transforms reads them once)."""
    return _native.value("augment_tables")


def apply_op(pixels, height, width, op, magnitude, interpolation, fill):
    """One augmentation on `pixels` (height x width x 3 bytes, RGB), checked by the caller
    (stoker.transforms): the bytes after it."""
    args = {"op": op, "magnitude": magnitude, "width": width, "height": height,
            "interpolation": interpolation, "fill": fill}
    return _native.call("apply_op", args, data=pixels)[1] or b""  # no pixels: no bytes back


def augmix(pixels, height, width, interpolation, key):
    """AugMix on `pixels` (height x width x 3 bytes, RGB) with the draw of the sample `key`
    ({"seed", "epoch", "key"}), checked by stoker.transforms.augmix: (the draw, the bytes)."""
    args = {"width": width, "height": height, "interpolation": interpolation, **key}
    draw, pixels, _ = _native.call("augmix", args, data=pixels)
    return draw, pixels or b""


def augment_policy(policy, num_bins, height, width):
    """A policy's tables for stoker.transforms, checked by it: {"space": [[op, magnitudes,
    signed], ...], "sub_policies": [[[op, probability, bin or None], ...], ...],
    "num_bins": n}."""
    return _native.value("augment_policy", {"policy": policy, "num_bins": num_bins,
                                            "height": height, "width": width})


def mix_draw(args):
    """A batch's MixUp/CutMix draw for stoker.transforms.mix_draw, which checked `args`."""
    return _native.value("mix_draw", args)


class _Sampler:
    """The C++ DistributedSampler behind stoker.DistributedSampler (the permutation, the
    shard rule and the elastic resume stay in C++)."""
    __slots__ = ("_handle",)

    def __init__(self, size, world_size, rank, shuffle, seed, drop_last, fingerprint=0,
                 ra_reps=1, _handle=None):
        self._handle = _handle or _native.call("sampler_new", {
            "size": size, "world_size": world_size, "rank": rank, "shuffle": shuffle,
            "seed": seed, "drop_last": drop_last, "fingerprint": fingerprint,
            "ra_reps": ra_reps})[2]

    def _call(self, name, args=None):
        return _native.value(name, args, objects=(self._handle,))

    def copy(self):
        return _Sampler(0, 0, 0, False, 0, False,
                        _handle=_native.call("sampler_copy", objects=(self._handle,))[2])

    def set_epoch(self, epoch):
        self._call("sampler_set_epoch", {"epoch": epoch})

    epoch = property(lambda self: self._call("sampler_info")["epoch"])
    length = property(lambda self: self._call("sampler_info")["length"])
    start = property(lambda self: self._call("sampler_info")["start"])
    seed = property(lambda self: self._call("sampler_info")["seed"])
    fingerprint = property(lambda self: self._call("sampler_info")["fingerprint"])

    def indices(self, first, count):
        """Indices first .. first+count-1 of the shard, as a list."""
        import ctypes

        out = (ctypes.c_uint64 * count)()
        written = ctypes.c_uint64()
        status = _native.sampler_indices(self._handle.ptr, first, count, out,
                                         ctypes.byref(written))
        if status != _native.OK:
            _native.raise_status(status)
        return out[:written.value]

    def order(self, position):
        return self._call("sampler_order", {"position": position})

    def state(self, local_consumed):
        return self._call("sampler_state", {"local_consumed": local_consumed})

    def restore(self, text):
        self._call("sampler_restore", {"text": text})

    def view(self, comm_rank):
        return self._call("sampler_view", {"comm_rank": comm_rank})

    def agree_mpi(self):
        """agree_on_epoch over MPI (rank 0's seed)."""
        return self._call("sampler_agree_mpi")
