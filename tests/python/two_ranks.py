#!/usr/bin/env python3
"""One rank of the two-rank shard check: run as 2 ranks (srun -n2, or RANK/WORLD_SIZE set
by hand). Each rank iterates stoker.Loader.tokens over the same small token file for two
epochs and prints one JSON line per epoch with the dataset indices it read:

    {"rank": 0, "world_size": 2, "world_source": "SLURM_PROCID/SLURM_NTASKS",
     "epoch": 0, "size": 96, "indices": [...]}

check_two_ranks.py reads those lines and verifies the shards are disjoint and complete.

usage: two_ranks.py DATA_FILE   (created, identically by every rank, when missing)
"""
import json
import os
import sys

import stoker
from testdata import shared_token_file

SEQ = 8
WINDOWS = 96  # a multiple of 2 ranks x batch 4: no padding, so exactly-once is exact


def world_source():
    if "SLURM_PROCID" in os.environ and "RANK" not in os.environ:
        return "SLURM_PROCID/SLURM_NTASKS"
    return "RANK/WORLD_SIZE" if "RANK" in os.environ else "single process"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    shared_token_file(sys.argv[1], WINDOWS, SEQ)
    # world_size/rank None: the loader takes them from MPI, RANK/WORLD_SIZE or SLURM_*.
    loader = stoker.Loader.tokens(sys.argv[1], seq_len=SEQ, batch_size=4, seed=11,
                                  return_indices=True, workers=1)
    rank, world = loader.rank, loader.world_size  # what the loader detected
    for epoch in range(2):
        loader.set_epoch(epoch)
        indices = [i for _, _, batch in loader for i in batch.tolist()]
        print(json.dumps({"rank": rank, "world_size": world, "world_source": world_source(),
                          "epoch": epoch, "size": loader.dataset_size, "indices": indices}),
              flush=True)


if __name__ == "__main__":
    main()
