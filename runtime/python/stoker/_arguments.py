"""The public API's arguments (stoker.Loader and its constructors, the sampler, the plan's
helpers), checked once, before they cross into the C library. Each error names the argument
and what it allows: TypeError for the wrong type, ValueError for a value out of range
(tests/python/test_arguments.py). The bounds of the loader's and the image pipeline's options
are the C++ tables' (loader_fields.cpp, image_fields.cpp), read once from the library: a bound
is written in one place."""
import errno
import math
import os
import stat

__all__ = ["check_int", "check_bool", "boolean", "number", "choice", "numbers", "path", "paths",
           "by_row", "image_options", "shown"]


def shown(value):
    """"int 5", "str '8'": the type's name and the value's repr, as the messages show them."""
    return f"{type(value).__name__} {value!r}"


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_int(name, value, minimum=None, maximum=None, allow_none=False):
    """value, when it is an int (not a bool: batch_size=True is a mistake, not a 1) within
    [minimum, maximum] (None: no bound that way), or None with allow_none; else TypeError or
    ValueError naming the argument."""
    if value is None and allow_none:
        return value
    if not _is_int(value):
        raise TypeError(f"{name} must be {'an int or None' if allow_none else 'an int'}, "
                        f"got {shown(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value}: must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}={value}: must be at most {maximum}")
    return value


def check_bool(name, value):
    """value, when it is True or False; else TypeError naming the argument."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {shown(value)}")
    return value


boolean = check_bool


def number(name, value, lo, hi):
    """An int or a float within [lo, hi], as a float."""
    if not _is_number(value):
        raise TypeError(f"{name} must be a number, got {shown(value)}")
    if not float(lo) <= value <= float(hi):
        raise ValueError(f"{name}={value}: must be in [{float(lo)}, {float(hi)}]")
    return float(value)


def choice(name, value, choices):
    """A string, one of `choices`."""
    listed = ", ".join(choices)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {listed}; got {shown(value)}")
    if value not in choices:
        raise ValueError(f"{name}={value!r}: expected one of {listed}")
    return value


def numbers(name, value, length, above, ordered):
    """A sequence of `length` numbers, each greater than `above`, ascending when `ordered`."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{name} must be a sequence of {length} numbers, got {value!r}")
    if len(value) != length:
        raise ValueError(f"{name}={value!r}: expected {length} numbers")
    out = []
    for i, v in enumerate(value):
        if not _is_number(v):
            raise TypeError(f"{name}[{i}] must be a number, got {shown(v)}")
        if not v > above:
            raise ValueError(f"{name}[{i}]={v}: must be greater than {float(above)}")
        out.append(float(v))
    if ordered and out != sorted(out):
        raise ValueError(f"{name}={value!r}: expected (min, max) with min <= max")
    return out


def _is_path(value):
    return isinstance(value, (str, bytes, os.PathLike))


def _stat_problem(err, what):
    """Why stat() failed, true to its errno: only ENOENT is "no such ..."."""
    if err == errno.ENOENT:
        return f"no such {what}"
    text = os.strerror(err)
    if err == errno.ENOTDIR:
        return f"{text}: a part of the path before the last is a file"
    if err == errno.ELOOP:
        return f"{text}: a symbolic link that leads back to itself?"
    if err == errno.EACCES:
        return f"{text}: a folder of the path may not be searched"
    return text


def path(name, value, kind):
    """A str or os.PathLike naming an existing "file", "folder" or "any"; its bytes."""
    if not _is_path(value):
        raise TypeError(f"{name} must be a path (str or os.PathLike), got {shown(value)}")
    p = os.fspath(value)
    raw = os.fsencode(p)  # the bytes the OS takes
    where = f"{name}={p!r}"
    if b"\0" in raw:
        raise ValueError(f"{where}: holds a NUL byte, which no file name can")
    what = {"folder": "directory", "file": "file"}.get(kind, "file or directory")
    try:
        st = os.stat(raw)
    except OSError as e:
        raise ValueError(f"{where}: {_stat_problem(e.errno, what)}") from None
    if kind == "folder" and not stat.S_ISDIR(st.st_mode):
        raise ValueError(f"{where}: is a file, not a directory")
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        raise ValueError(where + (": is a directory, not a file" if stat.S_ISDIR(st.st_mode)
                                  else ": is not a regular file"))
    return raw


def paths(name, value, what):
    """A path, or a non-empty list of paths (each a file or folder); their bytes."""
    if _is_path(value):
        return [path(name, value, "any")]
    if not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a path or a list of paths, got {value!r}")
    items = list(value)
    if not items:
        raise ValueError(f"{name}=[]: give at least one {what}")
    return [path(f"{name}[{i}]", p, "any") for i, p in enumerate(items)]


def by_row(row, value):
    """`value` checked against its option's row of a C++ table (loader_fields(),
    image_fields(): name, kind, bounds, choices, whether None is allowed); the value to
    send."""
    name, kind = row["name"], row["kind"]
    # JSON has no infinity: an unbounded side comes as null.
    lo = -math.inf if row.get("lo") is None else row["lo"]
    hi = math.inf if row.get("hi") is None else row["hi"]
    if kind == "whole":
        return check_int(name, value, row["min"], row["max"], allow_none=row["none"] is not None)
    if value is None and row["none"] is not None:
        return None
    if kind == "flag":
        return check_bool(name, value)
    if kind == "fraction":
        return number(name, value, lo, hi)
    if kind == "choice":
        return choice(name, value, row["choices"])
    if kind == "range":
        pair = numbers(name, value, 2, lo, ordered=True)
        if pair[1] > hi:
            raise ValueError(f"{name}={value!r}: the maximum cannot exceed {hi:g}")
        return pair
    if kind == "triple":
        return numbers(name, value, 3, lo, ordered=False)
    raise TypeError(f"{name}: an option of unknown kind {kind!r}")


_image_rows = None


def image_options(d):
    """The image pipeline's options in `d` (any subset of image_fields()' rows), each checked
    against its row; an unknown key is a TypeError."""
    global _image_rows
    if _image_rows is None:
        from . import _native

        _image_rows = {row["name"]: row for row in _native.info()["image_fields"]}
    out = {}
    for key, value in d.items():
        row = _image_rows.get(key)
        if row is None:
            raise TypeError(f"image transform: unknown option {key}")
        out[key] = by_row(row, value)
    return out
