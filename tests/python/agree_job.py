#!/usr/bin/env python3
"""One rank of the epoch-agreement checks (check_agree.py starts and judges them). Each rank
runs a stoker.Loader.tokens and a stoker.DistributedSampler over the same small token file for
a few epochs and prints what happened, one line each:

    rank R: agreement MODE          (the loader's stats()['agreement'] after the first epoch)
    rank R: epoch E done
    rank R: error: MESSAGE           (a stoker.Error; the rank then exits 3)
    rank R: sampler|loader error: MESSAGE   (seeds: what each of the two said)

usage: agree_job.py SCENARIO DATA_FILE [--backend gloo|none] [--epochs N]
  ok     every rank agrees
  seeds  rank r is given seed 100 + r: the first epoch must fail, on every rank alike
  late   rank 0 pauses LATE_SECONDS (env, default 3.5) before epoch 1 (a checkpoint)
  early  rank 1 leaves after epoch 0: the others must give up after STOKER_AGREE_TIMEOUT
  eval   between epochs rank 0 alone iterates an evaluation loader and sampler (world_size 1)
--backend gloo initialises torch.distributed (env://: RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT); none leaves it alone (under MPI the C++ side agrees).
"""
import argparse
import os
import sys
import time

import stoker
from testdata import shared_token_file

SEQ = 8
WINDOWS = 96


def say(rank, text):
    # One write per line, newline included: print() writes the text and its end apart when
    # stdout is unbuffered, and mpirun then glued two ranks' lines together.
    sys.stdout.write(f"rank {rank}: {text}\n")
    sys.stdout.flush()


def run(args, rank, dist):
    seed = 100 + rank if args.scenario == "seeds" else 11
    loader = stoker.Loader.tokens(args.data, seq_len=SEQ, batch_size=4, seed=seed, workers=1)
    sampler = stoker.DistributedSampler(range(loader.dataset_size), seed=seed)
    if args.scenario == "seeds":  # both must refuse the first epoch
        for name, first_epoch in (("sampler", sampler), ("loader", loader)):
            try:
                list(first_epoch)
                say(rank, f"{name} started its first epoch")
            except stoker.Error as e:
                say(rank, f"{name} error: {e}")
        os._exit(3)
    for epoch in range(args.epochs):
        if epoch == 1 and args.scenario == "late" and rank == 0:
            time.sleep(float(os.environ.get("LATE_SECONDS", "3.5")))
        if epoch == 1 and args.scenario == "early" and rank == 1:
            say(rank, "leaving early")
            os._exit(0)  # no goodbye: as a crashed rank
        if epoch == 1 and args.scenario == "eval" and rank == 0:
            evaluation = stoker.Loader.tokens(args.data, seq_len=SEQ, batch_size=4, workers=1,
                                              world_size=1, rank=0)
            alone = stoker.DistributedSampler(range(7), num_replicas=1, rank=0)
            say(rank, f"evaluated {sum(len(x) for x, _ in evaluation)} samples and "
                      f"{len(list(alone))} indices alone")
            evaluation.close()
        loader.set_epoch(epoch)
        sampler.set_epoch(epoch)
        samples = sum(len(x) for x, _ in loader)
        indices = list(sampler)
        if epoch == 0:
            say(rank, f"agreement {loader.stats()['agreement']} / {sampler.agreement}")
        say(rank, f"epoch {epoch} done: {samples} samples, {len(indices)} indices")
    if dist is not None:
        dist.barrier()  # rank 0 holds the store: nobody leaves while another still reads it
    loader.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=("ok", "seeds", "late", "early", "eval"))
    p.add_argument("data")
    p.add_argument("--backend", choices=("gloo", "none"), default="none")
    p.add_argument("--epochs", type=int, default=2)
    args = p.parse_args()
    shared_token_file(args.data, WINDOWS, SEQ)
    rank = stoker._stoker.world()["rank"]
    dist = None
    if args.backend == "gloo":
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method="env://")
        rank = dist.get_rank()
    try:
        run(args, rank, dist)
    except stoker.Error as e:
        say(rank, f"error: {e}")
        sys.stdout.flush()
        os._exit(3)  # skip torch's exit-time teardown: the other ranks may be gone


if __name__ == "__main__":
    main()
