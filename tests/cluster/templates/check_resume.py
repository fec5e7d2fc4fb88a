#!/usr/bin/env python3
"""Checks an elastic resume of pytorch_ddp_train.py from its per-rank sample logs
(PREFIX.rank<R>.txt, lines "epoch E step K i1 i2 ...") and the checkpoint it resumed from:

  - the checkpoint is mid-epoch (0 < consumed < size);
  - the killed run's ranks took exactly `consumed` samples of that epoch before it, each once;
  - the resumed run's ranks took the rest of the epoch: every remaining sample, none of the
    consumed ones, and no sample twice except the wrap that pads the last round to equal
    shards (torch's rule: ceil(rest / ranks) x ranks positions).

usage: check_resume.py CHECKPOINT PREFIX1 RANKS1 PREFIX2 RANKS2 BATCH_SIZE
"""
import sys
from collections import Counter

import torch


def samples(prefix, ranks, epoch, steps=None):
    """The indices the ranks logged for `epoch` (only its first `steps` batches per rank)."""
    out = []
    for rank in range(ranks):
        with open(f"{prefix}.rank{rank}.txt") as f:
            for line in f:
                words = line.split()
                if int(words[1]) == epoch and (steps is None or int(words[3]) < steps):
                    out += [int(w) for w in words[4:]]
    return out


def check(ckpt, prefix1, ranks1, prefix2, ranks2, batch_size):
    state = torch.load(ckpt)["input"]
    epoch, consumed, size = state["epoch"], state["consumed"], state["size"]
    if not 0 < consumed < size:
        return f"the checkpoint is not mid-epoch: {consumed} of {size} samples consumed"
    steps = consumed // (batch_size * ranks1)  # the killed run's pass started at the epoch's start
    before = samples(prefix1, ranks1, epoch, steps)
    if len(before) != consumed or len(set(before)) != consumed:
        return f"the killed run logged {len(before)} samples ({len(set(before))} distinct) " \
               f"before its checkpoint, which says {consumed}"
    after = Counter(samples(prefix2, ranks2, epoch))
    rest = size - consumed
    if set(after) & set(before):
        return f"the resumed run saw {len(set(after) & set(before))} samples consumed before"
    if set(after) | set(before) != set(range(size)):
        return f"{size - len(set(after) | set(before))} samples of epoch {epoch} never seen"
    padded = -(-rest // ranks2) * ranks2
    if sum(after.values()) != padded or max(after.values()) > 2:
        return f"the resumed run took {sum(after.values())} samples for the {rest} left " \
               f"(expected {padded}: the rest once, padded to equal shards)"
    print(f"OK: epoch {epoch}: {consumed} samples on {ranks1} ranks before the kill, the other "
          f"{rest} exactly once on {ranks2} ranks after it ({padded - rest} padding)")
    return None


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    a = sys.argv
    why = check(a[1], a[2], int(a[3]), a[4], int(a[5]), int(a[6]))
    if why:
        print(f"FAIL: {why}")
        sys.exit(1)
