"""Argument checks for the arguments that stay in Python (the plan's, the sampler's, the
loader's own): each error names the argument and what is allowed. They are the C++ side's
(runtime/python/src/arguments.cpp), which checks the arguments that reach the C++ loader:
every argument error has one wording.

    check_int(name, value, minimum=None, maximum=None, allow_none=False) -> value
        an int, not a bool (batch_size=True is a mistake, not a 1), within the bounds
    check_bool(name, value) -> value
        True or False
"""
from . import _stoker

__all__ = ["check_int", "check_bool"]

check_int = _stoker.check_int
check_bool = _stoker.check_bool
