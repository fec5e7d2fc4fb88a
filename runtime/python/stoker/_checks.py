"""Argument checks for the arguments that stay in Python (the plan's, the sampler's, the
loader's own): each error names the argument and what is allowed, in the one wording of
_arguments.py, which also checks the arguments that reach the C library.

    check_int(name, value, minimum=None, maximum=None, allow_none=False) -> value
        an int, not a bool (batch_size=True is a mistake, not a 1), within the bounds
    check_bool(name, value) -> value
        True or False
"""
from ._arguments import check_bool, check_int

__all__ = ["check_int", "check_bool"]
