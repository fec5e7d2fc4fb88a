#!/usr/bin/env python3
"""One rank of the shared-listing checks (test_faults_metadata.py starts the ranks, each
under strace): opens stoker.Loader.images(ROOT) with the smallest ring (so that few images
are read before close) and prints one line:

    rank R size N fingerprint 0xF

usage: listing_job.py ROOT gloo|none
  gloo  init_process_group("gloo") first (env://: RANK, WORLD_SIZE, MASTER_ADDR/PORT)
  none  no group (under mpirun the C++ side shares the listing over MPI)
"""
import re
import sys

import stoker

root, backend = sys.argv[1], sys.argv[2]
if backend == "gloo":
    import torch.distributed as dist
    dist.init_process_group("gloo")
loader = stoker.Loader.images(root, batch_size=8, workers=1, prefetch=1, max_depth=1,
                              held_batches=1, adaptive=False)
state = loader.state_dict()
fingerprint = re.search(r"fingerprint=(0x[0-9a-f]+)", state["sampler"]).group(1)
print(f"rank {loader.rank} size {state['size']} fingerprint {fingerprint}", flush=True)
loader.close()
if backend == "gloo":
    dist.barrier()  # rank 0 holds the store: it leaves last
