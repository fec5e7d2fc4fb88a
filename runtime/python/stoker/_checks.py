"""Argument checks for the arguments that stay in Python (the plan's, the sampler's, the
loader's own): each error names the argument and what is allowed. The arguments that reach
the C++ loader are checked there, with the same messages (runtime/python/src/arguments.cpp)."""

__all__ = ["check_int", "check_bool"]


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
