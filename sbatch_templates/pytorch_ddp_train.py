#!/usr/bin/env python3
"""PyTorch DDP under Slurm with stoker's plan, no torchrun (see pytorch_ddp.sbatch).

Reads the variables stoker's plugin exports for every task:
  RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT  -> init_process_group("env://")
  the STOKER_* plan -> stoker.plan().torch_dataloader_kwargs(): num_workers,
  prefetch_factor (the plan's whole-rank depth per worker), persistent workers pinned to the
  plan's CPUs, pin_memory
Needs stoker's Python module (`cmake --install build`, or PYTHONPATH=build/python).
Trains a small MLP on a learnable synthetic dataset (Gaussian blobs, the same on every
rank) with a DistributedSampler, and prints samples/s and the first and last loss.
"""
import argparse
import os
import sys
import time

import stoker
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def env_int(name, fallback=None):
    value = os.environ.get(name, fallback)
    if value is None:
        sys.exit(f"ddp: {name} is not set: enable stoker's plugin (--stoker) or export it")
    try:
        return int(value)
    except ValueError:
        sys.exit(f"ddp: {name}={value!r} is not a whole number")


def blobs(n, features, classes, seed):
    """n samples around `classes` random centres: learnable, identical on every rank."""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, features, generator=g) * 2
    labels = torch.randint(0, classes, (n,), generator=g)
    return TensorDataset(centres[labels] + torch.randn(n, features, generator=g), labels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--batch-size", type=int, default=64)
    args = p.parse_args()

    # The plugin exports these; the SLURM_* fallbacks only help when it is disabled.
    rank = env_int("RANK", os.environ.get("SLURM_PROCID"))
    world = env_int("WORLD_SIZE", os.environ.get("SLURM_NTASKS"))
    local_rank = env_int("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0"))
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if name not in os.environ:
            sys.exit(f"ddp: rank {rank}: {name} is not set: enable stoker's plugin (--stoker)")

    use_cuda = torch.cuda.is_available()
    backend = "nccl" if use_cuda else "gloo"
    device = torch.device("cpu")
    if use_cuda:  # with --gpus-per-task=1 each task sees exactly one GPU
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    try:
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world)
    except Exception as e:  # name the rank and the cause, then stop
        sys.exit(f"ddp: rank {rank}: init_process_group({backend}) via "
                 f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} failed: {e}")

    # The loader's settings from stoker's plan (per rank, for the cores it was given): the
    # plugin's STOKER_* plan, else one computed for this process.
    plan = stoker.plan()
    kwargs = plan.torch_dataloader_kwargs()
    kwargs["pin_memory"] = pin = kwargs["pin_memory"] and use_cuda
    print(f"ddp: rank {rank}/{world} local {local_rank} backend {backend} device {device} "
          f"DataLoader(num_workers={kwargs['num_workers']}, "
          f"prefetch_factor={kwargs.get('prefetch_factor')}, pin_memory={kwargs['pin_memory']}) "
          f"from the plan ({plan.source}): workers={plan.workers} prefetch={plan.prefetch}",
          flush=True)

    data = blobs(args.samples, 32, 4, seed=0)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0,
                                 drop_last=True)
    loader = DataLoader(data, batch_size=args.batch_size, sampler=sampler, **kwargs)
    torch.manual_seed(0)  # the same initial weights on every rank
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 4)).to(device)
    model = DDP(model, device_ids=[device.index] if use_cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()

    first = last = None
    seen = 0
    start = time.perf_counter()
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device, non_blocking=pin), y.to(device, non_blocking=pin)
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            value = loss.detach()
            dist.all_reduce(value)
            value = value.item() / world
            first = value if first is None else first
            last = value
            seen += len(y) * world
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"ddp: done: {args.epochs} epochs, {seen / elapsed:.1f} samples/s, "
              f"loss first {first:.4f} last {last:.4f}, backend {backend}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
