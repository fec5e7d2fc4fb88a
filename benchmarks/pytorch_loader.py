#!/usr/bin/python3
"""The PyTorch side of the side-by-side benchmark: torch.utils.data.DataLoader on the same
data and work as `stoker bench`. Prints one JSON object.

  images DIR  ImageFolder + RandomResizedCrop(224), RandomHorizontalFlip, ToTensor, Normalize
  tokens FILE np.memmap uint16 token file; windows of seq_len+1 tokens (stride seq_len),
              returned as int64 tensors as nanoGPT-style loaders do (torch has no uint16)

Throughput is samples over the wall time from the first batch request of epoch 0 to the
end of the last epoch (the same definition as stoker bench). Peak RSS is VmHWM summed over
the main process and the workers (shared pages count in each, as RSS does).
"""
import argparse
import json
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, Subset


def vm_hwm(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class TokenWindows(Dataset):
    def __init__(self, path, seq_len):
        self.path, self.seq_len = path, seq_len
        self.tokens = os.path.getsize(path) // 2
        self.mm = None  # opened lazily in each worker

    def __len__(self):
        return (self.tokens - 1) // self.seq_len

    def __getitem__(self, i):
        if self.mm is None:
            self.mm = np.memmap(self.path, dtype=np.uint16, mode="r")
        s = i * self.seq_len
        return torch.from_numpy(self.mm[s:s + self.seq_len + 1].astype(np.int64))


def make_dataset(a):
    if a.what == "images":
        import torchvision.datasets as datasets
        import torchvision.transforms as T
        tf = T.Compose([T.RandomResizedCrop(a.size), T.RandomHorizontalFlip(), T.ToTensor(),
                        T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        ds = datasets.ImageFolder(a.path, transform=tf)
        bytes_per_sample = 3 * a.size * a.size * 4  # float32 output
    else:
        ds = TokenWindows(a.path, a.seq_len)
        bytes_per_sample = 2 * (a.seq_len + 1)  # the uint16 window read
    if a.samples:
        ds = Subset(ds, range(min(a.samples, len(ds))))
    return ds, bytes_per_sample


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["images", "tokens"])
    ap.add_argument("path")
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--samples", type=int, default=0, help="use the first N samples (0: all)")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--prefetch", type=int, default=2, help="prefetch_factor (per worker)")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--step-ms", type=float, default=0, help="simulated GPU training step per batch (sleep)")
    a = ap.parse_args()
    batch = a.batch_size or (64 if a.what == "images" else 16)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    ds, bytes_per_sample = make_dataset(a)
    kw = dict(num_workers=a.workers, persistent_workers=a.workers > 0)
    if a.workers > 0:
        kw["prefetch_factor"] = a.prefetch
    t_construct = time.perf_counter()
    loader = DataLoader(ds, batch_size=batch, shuffle=True, **kw)
    first_ms, epoch_rate, samples = [], [], 0
    t0 = time.perf_counter()
    construct_s = t0 - t_construct
    worker_pids = set()
    for e in range(a.epochs):
        te = time.perf_counter()
        n = 0
        it = iter(loader)
        for i, batch_data in enumerate(it):
            if i == 0:
                first_ms.append((time.perf_counter() - te) * 1e3)
            x = batch_data[0] if isinstance(batch_data, (list, tuple)) else batch_data
            n += x.shape[0]
            if a.step_ms > 0:
                time.sleep(a.step_ms / 1e3)  # a GPU step: the main process mostly waits
        epoch_rate.append(n / (time.perf_counter() - te))
        samples += n
        worker_pids.update(w.pid for w in getattr(it, "_workers", []))
    wall = time.perf_counter() - t0
    rss = vm_hwm(os.getpid()) + sum(vm_hwm(p) for p in worker_pids)
    print(json.dumps({
        "what": a.what, "side": "pytorch", "workers": a.workers, "prefetch_factor": a.prefetch,
        "batch_size": batch, "epochs": a.epochs, "samples": samples, "wall_s": wall,
        "construct_s": construct_s,
        "samples_per_s": samples / wall, "epoch_samples_per_s": epoch_rate,
        "bytes_per_s": samples * bytes_per_sample / wall, "epoch_first_batch_ms": first_ms,
        "peak_rss_bytes": rss, "processes": 1 + len(worker_pids), "step_ms": a.step_ms,
    }))


if __name__ == "__main__":
    main()
