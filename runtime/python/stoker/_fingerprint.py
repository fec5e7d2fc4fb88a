"""The fingerprint of a Python dataset, for stoker.DistributedSampler: what the ranks compare
at each epoch start and what a resume state must match, beside the dataset's length.

  fingerprint=KEY given (str, bytes or int: a version, a file list's hash, ...): len + KEY;
  fingerprint=False: no item read (a dataset that must not be read in this process, such as
  one that opens an HDF5 file on first access and is then forked into DataLoader workers);
  else a few items read at fixed positions, when they are made of tensors, numpy arrays or
  bytes (alone or in tuples, lists and dicts, with plain numbers and strings beside them:
  (image, label) is one): len + their contents.

Each item is read twice: one that changes between reads (a random augmentation) cannot be
compared across ranks, and is said "not checked" rather than failing every rank. The random
states of random, numpy and torch are restored afterwards, so fingerprinting does not move
the training's random stream. When no fingerprint can be made, the value is 0 and `text`
says "not checked" and why; the length is then the only check.
"""
import hashlib
import random
import sys

__all__ = ["Fingerprint", "dataset_fingerprint"]

_ITEMS = 3  # items read: the first, the middle and the last (each twice)


class Fingerprint:
    def __init__(self, value, text):
        self.value, self.text = value, text  # value 0: not checked

    def __repr__(self):
        return self.text


def _digest(h):
    return int.from_bytes(h.digest()[:8], "little") or 1  # 0 means "not checked"


class _Unhashable(Exception):
    pass


def _feed(h, item):
    """Feeds item's contents to h; True when it held a tensor, array or bytes."""
    if isinstance(item, (bytes, bytearray, memoryview)):
        h.update(b"b%d:" % len(item))
        h.update(bytes(item))
        return True
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(item, torch.Tensor):
        item = item.detach().cpu().contiguous().numpy()
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(item, numpy.ndarray):
        h.update(f"a{item.dtype.str}{item.shape}:".encode())
        h.update(numpy.ascontiguousarray(item).tobytes())
        return True
    if isinstance(item, (bool, int, float, str, type(None))) or (
            numpy is not None and isinstance(item, numpy.generic)):
        h.update(f"s{item!r};".encode())
        return False
    if isinstance(item, (tuple, list)):
        h.update(b"(%d" % len(item))
        return any([_feed(h, x) for x in item])  # all fed, in order
    if isinstance(item, dict):
        h.update(b"{%d" % len(item))
        return any([_feed(h, k) | _feed(h, v) for k, v in item.items()])
    raise _Unhashable(type(item).__qualname__)


def _item_digest(dataset, position):
    h = hashlib.blake2b()
    if not _feed(h, dataset[position]):
        raise _Unhashable("plain numbers or strings only")
    return h.digest()


class _RandomStatesKept:
    """Restores random's, numpy's and torch's global random states on leaving."""

    def __enter__(self):
        self.python = random.getstate()
        numpy, torch = sys.modules.get("numpy"), sys.modules.get("torch")
        self.numpy = numpy.random.get_state() if numpy is not None else None
        self.torch = torch.get_rng_state() if torch is not None else None
        return self

    def __exit__(self, *exc):
        random.setstate(self.python)
        if self.numpy is not None:
            sys.modules["numpy"].random.set_state(self.numpy)
        if self.torch is not None:
            sys.modules["torch"].set_rng_state(self.torch)


def dataset_fingerprint(dataset, size, key=None):
    """The Fingerprint of `dataset` (len `size`), with the user's key when given."""
    if key is False:
        return Fingerprint(0, "not checked: fingerprint=False (no item read)")
    h = hashlib.blake2b()
    h.update(b"len %d;" % size)
    if key is not None:
        if not isinstance(key, (str, bytes, int)) or isinstance(key, bool):
            raise TypeError("fingerprint must be a str, bytes or int that names the dataset's "
                            "contents (a version, a hash), or False (read no item), got "
                            f"{type(key).__name__} {key!r}")
        h.update(repr(key).encode())
        value = _digest(h)
        return Fingerprint(value, f"0x{value:016x} (len {size}, key {key!r})")
    positions = sorted({0, size // 2, size - 1})[:_ITEMS]
    try:
        with _RandomStatesKept():
            for p in positions:
                first = _item_digest(dataset, p)
                if _item_digest(dataset, p) != first:
                    return Fingerprint(0, f"not checked: item {p} differs between two reads "
                                          "(a random transform?); pass fingerprint=KEY")
                h.update(first)
    except _Unhashable as e:
        return Fingerprint(0, f"not checked: the items are not tensors, arrays or bytes ({e}); "
                              "pass fingerprint=KEY")
    except Exception as e:  # reading an item failed: the sampler does not need the items
        return Fingerprint(0, f"not checked: reading item failed ({type(e).__name__}: {e}); "
                              "pass fingerprint=KEY")
    value = _digest(h)
    return Fingerprint(value, f"0x{value:016x} (len {size}, items {positions})")
