#!/usr/bin/env python3
"""One rank of the launcher matrix (world_matrix.py starts the ranks and judges them).

usage: world_job.py LAUNCH PHASE OUT_DIR [--ranks N]
  LAUNCH  spawn-tcp  mp.spawn N ranks here; each init_process_group("gloo",
                     init_method="tcp://127.0.0.1:PORT", rank=r, world_size=N), no variables
          spawn-env  mp.spawn; MASTER_ADDR/MASTER_PORT set, init_method="env://", rank and
                     world_size passed to init_process_group
          harness    PyTorch's test harness: as spawn-env, plus WORLD_SIZE set (RANK unset)
          env        started by a launcher (torchrun, srun, mpirun): init_process_group("gloo")
                     from its variables when MASTER_ADDR is set, else no group (the world
                     then comes from SLURM_*, OMPI_* or MPI)
  PHASE   first      2 epochs in full, then 6 indices of epoch 2 and state_dict(consumed=6);
                     torch's padding test on torch's class and stoker's; a stoker.Loader
          resume     load rank 0's state from the first phase, walk the rest of epoch 2
Each rank writes OUT_DIR/PHASE-rank<r>.json. The sampler, the dataset and the Loader are
left to find the world themselves: num_replicas/rank (world_size/rank) are never passed.
"""
import argparse
import copy
import json
import math
import os
import pickle
import sys

import numpy as np

from testdata import free_port, shared_token_file

SIZE = 66          # divisible by 2 and, after 2 x 6 consumed, the rest (54) by 3
CONSUMED = 6       # indices of epoch 2 each rank consumes before the state is taken
SEED = 7
SEQ, WINDOWS = 8, 68


def tokens_file(out_dir):
    return shared_token_file(os.path.join(out_dir, "tokens.bin"), WINDOWS, SEQ)


def padding(cls, world_size):
    """torch's test_DistributedSampler_padding, as numbers: per dataset size and drop_last,
    (num_samples, total_size, indices handed out)."""
    import torch

    out = {}
    for size in (100 + world_size + 1, max(world_size // 2 - 1, 1)):
        dataset = [torch.ones(1) * i for i in range(size)]
        for drop_last in (True, False):
            if drop_last and size < world_size:
                continue  # torch's test drops only the casual size's tail
            s = cls(dataset=dataset, drop_last=drop_last)
            out[f"{size}/{drop_last}"] = [s.num_samples, s.total_size, len(list(iter(s)))]
    return out


def used_on_another_rank(sampler, dist, out_dir):
    """Each rank pickles its sampler, then iterates the next rank's: the refusal's text."""
    rank, size = dist.get_rank(), dist.get_world_size()
    with open(os.path.join(out_dir, f"sampler-rank{rank}.pkl"), "wb") as f:
        pickle.dump(sampler, f)
    dist.barrier()
    with open(os.path.join(out_dir, f"sampler-rank{(rank + 1) % size}.pkl"), "rb") as f:
        foreign = pickle.load(f)
    try:
        iter(foreign)
        return "iterated"
    except RuntimeError as e:
        return str(e)


def first_phase(stoker, dist, out_dir):
    sampler = stoker.DistributedSampler(np.arange(SIZE), seed=SEED, fingerprint="world-job")
    record = {"num_replicas": sampler.num_replicas, "rank": sampler.rank,
              "world_source": sampler.world_source, "len": len(sampler), "epochs": []}
    for epoch in (0, 1):
        sampler.set_epoch(epoch)
        record["epochs"].append([int(i) for i in sampler])
    record["agreement"] = sampler.agreement
    sampler.set_epoch(2)
    walk = iter(sampler)
    record["consumed"] = [int(next(walk)) for _ in range(CONSUMED)]
    record["state"] = sampler.state_dict(consumed=CONSUMED)
    if record["rank"] == 0:  # one rank copies alone: the copy must enter no collective
        record["copy_len"] = len(copy.deepcopy(sampler))
    if dist is not None:
        record["foreign"] = used_on_another_rank(sampler, dist, out_dir)
        from torch.utils.data.distributed import DistributedSampler as TorchSampler

        record["padding"] = {"stoker": padding(stoker.DistributedSampler, sampler.num_replicas),
                             "torch": padding(TorchSampler, sampler.num_replicas)}
    loader = stoker.Loader.tokens(tokens_file(out_dir), seq_len=SEQ, batch_size=4, seed=SEED,
                                  workers=1)
    record["loader"] = {"world_size": loader.world_size, "rank": loader.rank,
                        "world_source": loader.world_source, "batches": len(loader),
                        "read": sum(1 for _ in loader),
                        "all_batches": math.ceil(loader.dataset_size / 4)}
    loader.close()
    return record


def resume_phase(stoker, out_dir):
    with open(os.path.join(out_dir, "first-rank0.json")) as f:
        state = json.load(f)["state"]
    sampler = stoker.DistributedSampler(np.arange(SIZE), seed=SEED, fingerprint="world-job")
    sampler.load_state_dict(state)
    sampler.set_epoch(2)  # the usual loop calls it first: the loaded state stays
    return {"num_replicas": sampler.num_replicas, "rank": sampler.rank,
            "world_source": sampler.world_source, "rest": [int(i) for i in sampler]}


def run(rank, args, port):
    """One rank: join the group as LAUNCH says, do PHASE, write the record."""
    import torch.distributed as dist

    if args.launch == "spawn-tcp":
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=args.ranks)
    elif args.launch in ("spawn-env", "harness"):
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=args.ranks)
    elif os.environ.get("MASTER_ADDR"):
        dist.init_process_group("gloo")
    else:
        dist = None
    import stoker  # after the group, as a training script would; it must not matter

    if args.phase == "first":
        record = first_phase(stoker, dist, args.out_dir)
    else:
        record = resume_phase(stoker, args.out_dir)
    if dist is not None:
        dist.barrier()  # rank 0 holds the store: nobody leaves while another still reads it
    name = os.path.join(args.out_dir, f"{args.phase}-rank{record['rank']}.json")
    with open(name + ".tmp", "w") as f:
        json.dump(record, f)
    os.replace(name + ".tmp", name)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("launch", choices=("spawn-tcp", "spawn-env", "harness", "env"))
    p.add_argument("phase", choices=("first", "resume"))
    p.add_argument("out_dir")
    p.add_argument("--ranks", type=int, default=2)
    args = p.parse_args()
    if args.launch == "env":
        run(None, args, None)
        return
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT"):
        os.environ.pop(name, None)
    port = free_port()
    if args.launch != "spawn-tcp":
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    if args.launch == "harness":
        os.environ["WORLD_SIZE"] = str(args.ranks)
    import torch.multiprocessing as mp

    mp.spawn(run, args=(args, port), nprocs=args.ranks)


if __name__ == "__main__":
    sys.exit(main())
