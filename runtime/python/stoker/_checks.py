"""Argument checks for the public API: each error names the argument and what is allowed."""
import os

__all__ = ["check_int", "check_bool", "check_float", "check_choice", "check_pair", "check_path"]


def check_int(name, value, minimum=None, maximum=None, allow_none=False):
    if value is None and allow_none:
        return None
    # bool is an int subclass, but batch_size=True is a mistake, not a 1.
    if isinstance(value, bool) or not isinstance(value, int):
        kind = "an int or None" if allow_none else "an int"
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value}: must be at least {minimum}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name}={value}: must be at most {maximum}")
    return value


def check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def check_float(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name}={value}: must be in [{low}, {high}]")
    return float(value)


def check_choice(name, value, choices):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(choices)}; "
                        f"got {type(value).__name__} {value!r}")
    if value not in choices:
        raise ValueError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


def check_pair(name, value, low=0.0, ordered=True, length=2):
    """A sequence of `length` positive numbers (ordered ascending when `ordered`)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{name} must be a sequence of {length} numbers, got {value!r}")
    if len(value) != length:
        raise ValueError(f"{name}={value!r}: expected {length} numbers")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"{name}[{i}] must be a number, got {type(v).__name__} {v!r}")
        if v <= low:
            raise ValueError(f"{name}[{i}]={v}: must be greater than {low}")
        out.append(float(v))
    if ordered and out != sorted(out):
        raise ValueError(f"{name}={value!r}: expected (min, max) with min <= max")
    return tuple(out)


def check_path(name, value, kind):
    """A str or os.PathLike naming an existing file (kind='file'), directory ('dir') or
    either ('any')."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a path (str or os.PathLike), "
                        f"got {type(value).__name__} {value!r}")
    path = os.fspath(value)
    ok = {"dir": os.path.isdir, "file": os.path.isfile, "any": os.path.exists}[kind](path)
    if not ok:
        what = {"dir": "directory", "file": "file", "any": "file or directory"}[kind]
        raise ValueError(f"{name}={path!r}: no such {what}")
    return path
