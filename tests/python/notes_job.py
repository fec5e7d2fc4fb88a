#!/usr/bin/env python3
"""One rank of test_faults_notes.py: a training script that replaces builtins.print so that only
rank 0 prints (as torchvision's reference scripts do in their utils.setup_for_distributed; the
same rule, written here), then runs a stoker.DistributedSampler for two epochs over gloo
(env://: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Rank 0 is late at the start of epoch 1,
as when it writes a checkpoint, until RELEASE_FILE exists (the test makes it once rank 1's note
reached stderr) or LATE_LIMIT seconds passed.

usage: notes_job.py RELEASE_FILE
"""
import builtins
import os
import sys
import time

import torch.distributed as dist

import stoker

LATE_LIMIT = 60.0


def print_on_rank_0_only(is_master):
    """Replaces builtins.print with one that prints only when `is_master`, or when the call
    passes force=True: the rule of the reference scripts' setup_for_distributed."""
    original = builtins.print

    def gated(*args, **kwargs):
        force = kwargs.pop("force", False)
        if is_master or force:
            original(*args, **kwargs)

    builtins.print = gated


def main():
    release = sys.argv[1]
    dist.init_process_group("gloo", init_method="env://")
    rank = dist.get_rank()
    print_on_rank_0_only(rank == 0)
    sampler = stoker.DistributedSampler(range(16), seed=3)
    for epoch in range(2):
        if epoch == 1 and rank == 0:
            deadline = time.monotonic() + LATE_LIMIT
            while not os.path.exists(release) and time.monotonic() < deadline:
                time.sleep(0.05)
        sampler.set_epoch(epoch)
        count = len(list(sampler))
        sys.stdout.write(f"rank {rank}: epoch {epoch} done: {count} indices\n")
        sys.stdout.flush()
    dist.barrier()  # rank 0 holds the store: nobody leaves while another still reads it


if __name__ == "__main__":
    main()
