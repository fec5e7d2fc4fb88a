"""The per-sample choices of the pipelines, for reference implementations and tests, with
their arguments checked here: the library takes unsigned integers, and a negative one must be
a ValueError naming it, not a conversion error from deep inside."""
from . import _stoker
from ._checks import check_int

__all__ = ["crop_box", "flipped", "split_cpus"]

_U64 = 2**64 - 1


def crop_box(width, height, seed, epoch, index, options):
    """(x, y, w, h) in source pixels: the train crop of sample (seed, epoch, index) of a
    width x height image, or the eval box (Resize + CenterCrop) when options['train'] is
    False."""
    return _stoker.crop_box(check_int("width", width, 1, 2**31 - 1),
                            check_int("height", height, 1, 2**31 - 1),
                            check_int("seed", seed, 0, _U64), check_int("epoch", epoch, 0, _U64),
                            check_int("index", index, 0, _U64), options)


def flipped(seed, epoch, index, options):
    """Whether the train pipeline flips sample (seed, epoch, index) horizontally."""
    return _stoker.flipped(check_int("seed", seed, 0, _U64), check_int("epoch", epoch, 0, _U64),
                           check_int("index", index, 0, _U64), options)


def split_cpus(cpus, n):
    """The CPU lists of n equal shares of the CPU list `cpus` ("0-5,12")."""
    return _stoker.split_cpus(cpus, check_int("n", n, 1, 2**31 - 1))
