#!/usr/bin/env python3
"""PyTorch DDP on an image folder with stoker: a small ResNet, checkpoints, elastic resume.

Launcher-agnostic: it reads RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT from the
environment, whoever set them (stoker's plugin under srun, see pytorch_ddp.sbatch; torchrun).
Needs stoker's Python module (`cmake --install build`, or PYTHONPATH=build/python).

The data (DIR/<class>/<image>.jpg, as torchvision's ImageFolder) comes in one of two ways:
  --input dataloader  your usual DataLoader, its workers, prefetch and pinning from stoker's
                      plan (plan.torch_dataloader_kwargs()), and stoker.DistributedSampler
                      (torchvision's ImageFolder and transforms when installed, else PIL)
  --input stoker      stoker.Loader.images: C++ worker threads decode and crop into
                      recycled batch memory
Either way it checkpoints the model, the optimizer and where the epoch stands every
--checkpoint-every steps, and --resume continues from such a checkpoint, also on another
number of ranks: the rest of the epoch, every sample exactly once. --log-indices PREFIX
writes each rank's samples (PREFIX.rank<R>.txt, "epoch E step K i1 i2 ...") for checking.
"""
import argparse
import os
import sys
import time

import stoker
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


class Block(nn.Module):
    """A ResNet basic block: two 3x3 convolutions and a shortcut."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.shortcut = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


def small_resnet(classes):
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
        Block(16, 16, 1), Block(16, 32, 2), Block(32, 64, 2),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))


def image_folder(root, size):
    """(dataset, classes): sample i is (image, label, i), so the loop knows what it saw."""
    try:
        from torchvision import datasets, transforms

        folder = datasets.ImageFolder(root, transforms.Compose([
            transforms.RandomResizedCrop(size), transforms.RandomHorizontalFlip(),
            transforms.ToTensor(), transforms.Normalize(MEAN, STD)]))
        items, load = folder.samples, lambda i: folder[i]
    except ImportError:  # PIL alone: a plain resize and flip
        from PIL import Image

        classes = sorted(d.name for d in os.scandir(root) if d.is_dir())
        items = [(os.path.join(root, c, f), k) for k, c in enumerate(classes)
                 for f in sorted(os.listdir(os.path.join(root, c)))]
        mean, std = torch.tensor(MEAN).view(3, 1, 1), torch.tensor(STD).view(3, 1, 1)

        def load(i):
            image = Image.open(items[i][0]).convert("RGB").resize((size, size))
            x = torch.frombuffer(bytearray(image.tobytes()), dtype=torch.uint8)
            x = x.view(size, size, 3).permute(2, 0, 1).float().div(255)
            return ((x.flip(2) if torch.rand(()) < 0.5 else x) - mean) / std, items[i][1]

    class Indexed(torch.utils.data.Dataset):
        def __len__(self):
            return len(items)

        def __getitem__(self, i):
            return (*load(i), i)

    return Indexed(), len({label for _, label in items})


class Input:
    """The batches of one epoch as (images, labels, indices), and where the epoch stands."""

    def __init__(self, args, plan):
        self.kind, self.batch_size = args.input, args.batch_size
        if self.kind == "stoker":
            self.loader = stoker.Loader.images(args.data, batch_size=args.batch_size,
                                               size=args.image_size, seed=args.seed,
                                               return_indices=True, plan=plan)
            self.state = self.loader  # its state_dict() knows how far the loop got
            self.classes = sum(d.is_dir() for d in os.scandir(args.data))
            self.describe = repr(self.loader)
        else:
            data, self.classes = image_folder(args.data, args.image_size)
            self.sampler = self.state = stoker.DistributedSampler(data, seed=args.seed)
            kwargs = plan.torch_dataloader_kwargs()
            kwargs["pin_memory"] = kwargs["pin_memory"] and torch.cuda.is_available()
            self.loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size,
                                                      sampler=self.sampler, **kwargs)
            self.describe = (f"DataLoader(num_workers={kwargs['num_workers']}, prefetch_factor="
                             f"{kwargs.get('prefetch_factor')}, pin_memory={kwargs['pin_memory']})"
                             " with stoker.DistributedSampler")
        self.steps = 0  # batches taken in this pass

    def epoch(self, epoch):
        self.state.set_epoch(epoch)  # keeps a loaded state of this epoch
        self.steps = 0
        for batch in self.loader:
            self.steps += 1
            yield batch

    def state_dict(self):
        if self.kind == "stoker":
            return self.loader.state_dict()
        return self.sampler.state_dict(consumed=self.steps * self.batch_size)


def save(path, **checkpoint):
    tmp = f"{path}.tmp"
    torch.save(checkpoint, tmp)
    os.replace(tmp, path)  # a job killed while saving leaves the previous checkpoint whole


def env_int(name, fallback=None):
    value = os.environ.get(name, fallback)
    if value is None:
        sys.exit(f"ddp: {name} is not set: launch with srun and stoker's plugin, or torchrun")
    try:
        return int(value)
    except ValueError:
        sys.exit(f"ddp: {name}={value!r} is not a whole number")


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", required=True, help="image folder: DIR/<class>/<image>.jpg")
    p.add_argument("--input", choices=("dataloader", "stoker"), default="dataloader")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16, help="per rank")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0, help="the same on every rank")
    p.add_argument("--checkpoint", help="where to save (rank 0)")
    p.add_argument("--checkpoint-every", type=int, default=100, help="steps")
    p.add_argument("--resume", help="a checkpoint to continue from")
    p.add_argument("--log-indices", metavar="PREFIX", help="write PREFIX.rank<R>.txt")
    return p.parse_args()


def main():
    args = arguments()
    # The plugin (or torchrun) exports these; the SLURM_* fallbacks cover a task it left alone.
    rank = env_int("RANK", os.environ.get("SLURM_PROCID"))
    world = env_int("WORLD_SIZE", os.environ.get("SLURM_NTASKS"))
    local_rank = env_int("LOCAL_RANK", os.environ.get("SLURM_LOCALID", "0"))
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda", local_rank % torch.cuda.device_count()) if use_cuda \
        else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(device)
    backend = "nccl" if use_cuda else "gloo"
    dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world)

    plan = stoker.plan()  # this rank's cores, workers, prefetch: the plugin's, else computed
    data = Input(args, plan)
    print(f"ddp: rank {rank}/{world} local {local_rank} backend {backend} device {device} "
          f"{data.describe} from the plan ({plan.source}): workers={plan.workers} "
          f"prefetch={plan.prefetch}", flush=True)
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    model = DDP(small_resnet(data.classes).to(device), device_ids=[device] if use_cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    start_epoch, step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=device)
        model.module.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optimizer"])
        data.state.load_state_dict(ckpt["input"])  # also from another number of ranks
        start_epoch, step = ckpt["input"]["epoch"], ckpt["step"]
        print(f"ddp: rank {rank}: resumed epoch {start_epoch} at sample "
              f"{ckpt['input']['consumed']} of {ckpt['input']['size']} (saved by "
              f"{ckpt['world_size']} ranks)", flush=True)
    log = open(f"{args.log_indices}.rank{rank}.txt", "a", buffering=1) if args.log_indices \
        else None

    first = last = None
    seen, start = 0, time.perf_counter()
    for epoch in range(start_epoch, args.epochs):
        for images, labels, indices in data.epoch(epoch):
            if log:  # before the step: a checkpoint never covers a sample not logged
                log.write(f"epoch {epoch} step {data.steps - 1} "
                          f"{' '.join(map(str, indices.tolist()))}\n")
            images, labels = images.to(device, non_blocking=True), labels.to(device)
            loss = nn.functional.cross_entropy(model(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            value = loss.detach()
            dist.all_reduce(value)
            last = value.item() / world
            first = last if first is None else first
            seen += len(labels) * world
            if args.checkpoint and step % args.checkpoint_every == 0 and rank == 0:
                save(args.checkpoint, model=model.module.state_dict(), optimizer=opt.state_dict(),
                     input=data.state_dict(), step=step, world_size=world)
    elapsed = time.perf_counter() - start
    if rank == 0 and first is not None:
        print(f"ddp: done: {args.epochs - start_epoch} epochs, {seen / elapsed:.1f} samples/s, "
              f"loss first {first:.4f} last {last:.4f}, backend {backend}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
