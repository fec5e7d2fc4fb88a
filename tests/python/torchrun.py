#!/usr/bin/env python3
"""torchrun (python3 -m torch.distributed.run) for the launcher matrix, mended for Debian's
torch 1.13 under Python 3.11: there `Std.from_str("0")` (the default of --redirects and
--tee) returns None, since iterating an IntFlag no longer yields its zero member, and every
torchrun stops with "'NoneType' object has no attribute 'get'" before starting a worker.
The arguments are torchrun's; only the parsing of those two options is replaced, by the
same rule (a digit, or local_rank:digit pairs)."""
import sys

from torch.distributed.elastic.multiprocessing import api


def _std_from_str(cls, text):
    if ":" not in text:
        return cls(int(text))
    return {int(rank): cls(int(value))
            for rank, value in (pair.split(":") for pair in text.split(","))}


if api.Std.from_str("0") is None:
    api.Std.from_str = classmethod(_std_from_str)

from torch.distributed.run import main  # noqa: E402  (after the mend)

if __name__ == "__main__":
    sys.exit(main())
