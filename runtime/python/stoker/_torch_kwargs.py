"""The user's own DataLoader settings beside the plan's (Plan.torch_dataloader_kwargs).

Scripts set num_workers from their own flag (`-j`), and `DataLoader(ds, num_workers=args.workers,
**plan.torch_dataloader_kwargs())` is a TypeError ("got multiple values for keyword argument").
So the call takes those settings itself: each is checked as torch's DataLoader would refuse it,
but here, naming the argument; the values the user gave win; and one note on stderr names
every one that differs from the plan's, so that a script's `-j` never replaces the plan
unsaid (nor the plan a script's `-j`).
"""
from . import _notes, _stoker
from ._checks import check_bool, check_int
from ._world import torch_group

__all__ = ["KEYS", "checked", "differences"]

# The settings a script may keep, in the order the note names them.
KEYS = ("num_workers", "pin_memory", "prefetch_factor", "persistent_workers")


def checked(yours):
    """The settings the user gave (not None), checked. torch's DataLoader refuses
    prefetch_factor and persistent_workers=True without workers: refused here too, naming
    them (a plan has 1 worker or more, so only the user's num_workers=0 can lead there)."""
    given = {key: value for key, value in yours.items() if value is not None}
    if "num_workers" in given:
        # At most the C++ loader's limit: worker_shares() makes a CPU list per worker.
        check_int("num_workers", given["num_workers"], 0, _stoker.limits["max_workers"])
    for key in ("pin_memory", "persistent_workers"):
        if key in given:
            check_bool(key, given[key])
    if "prefetch_factor" in given:
        check_int("prefetch_factor", given["prefetch_factor"], 1, 2**31 - 1)
    if given.get("num_workers") == 0:
        if "prefetch_factor" in given:
            raise ValueError(f"prefetch_factor={given['prefetch_factor']} with num_workers=0: "
                             "torch's DataLoader takes prefetch_factor only with workers; "
                             "pass num_workers > 0 or leave prefetch_factor out")
        if given.get("persistent_workers"):
            raise ValueError("persistent_workers=True with num_workers=0: torch's DataLoader "
                             "keeps workers alive only when there are some; pass num_workers "
                             "> 0 or persistent_workers=False")
    return given


def differences(given, planned, kwargs):
    """Says on stderr, in one line, each setting the user gave that differs from the plan's
    (`planned`: what the call gives without them), and the prefetch_factor that follows a
    changed worker count (`kwargs`: what the call gives)."""
    parts = []
    for key in KEYS:
        if key not in given or planned.get(key) == given[key]:
            continue
        plan_says = f"the plan's {planned[key]!r}" if key in planned else "the plan sets none"
        if key == "num_workers" and "prefetch_factor" not in given and given[key] > 0:
            plan_says += f"; prefetch_factor {kwargs['prefetch_factor']} for the plan's depth"
        parts.append(f"{key}={given[key]!r} ({plan_says})")
    if parts:
        _notes.note(f"stoker: rank {_rank()}: torch_dataloader_kwargs: yours kept: "
                    + "; ".join(parts))


def _rank():
    """This rank for the note: the torch.distributed group's, else the launcher's ('?' when
    its variables cannot say: a note never raises)."""
    group = torch_group()
    if group is not None:
        return group.get_rank()
    try:
        return _stoker.launch_rank()
    except _stoker.Error:
        return "?"
