#!/usr/bin/python3
"""The ResNet-50 recipe's augmentations: stoker against PyTorch's DataLoader on the same
images, cores and work, alternated in one run.

    benchmarks/recipe_augment.py DATA [--rounds 3] [--workers 2] [--python-path build/python]

DATA is a folder of class folders of JPEGs (benchmarks/make_data.py DIR --images 1024 --tokens 0
makes DIR/images). Four loaders, batch 64, 176 px (torchvision's recipe for its current
ResNet-50 weights), float32 CHW, normalised, each in a fresh process, one warm epoch, then one
timed epoch:
  torch plain   RandomResizedCrop(176) + flip, DataLoader(num_workers=W, prefetch_factor=2,
                persistent_workers=True)
  torch recipe  the reference's ClassificationPresetTrain: + TrivialAugmentWide after the flip,
                RandomErasing(0.1) after Normalize
  stoker plain  Loader.images(size=176, workers=W)
  stoker recipe + auto_augment_policy="ta_wide", random_erase_prob=0.1
Prints each one's median img/s over the rounds, stoker's ratio to torch for each, and what the
augmentations cost each (recipe / plain)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

RUN = """
import json, sys, time
kind, root, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
batch, size = 64, 176
if kind.startswith("torch"):
    import torch, torchvision.transforms as T
    from torchvision.datasets import ImageFolder
    steps = [T.RandomResizedCrop(size, antialias=True), T.RandomHorizontalFlip()]
    if kind == "torch_recipe":
        steps.append(T.TrivialAugmentWide())
    steps += [T.PILToTensor(), T.ConvertImageDtype(torch.float),
              T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))]
    if kind == "torch_recipe":
        steps.append(T.RandomErasing(0.1))
    loader = torch.utils.data.DataLoader(ImageFolder(root, T.Compose(steps)), batch_size=batch,
                                         shuffle=True, num_workers=workers, prefetch_factor=2,
                                         persistent_workers=True, drop_last=False)
else:
    import stoker
    extra = {"auto_augment_policy": "ta_wide", "random_erase_prob": 0.1} \\
        if kind == "stoker_recipe" else {}
    loader = stoker.Loader.images(root, batch_size=batch, size=size, workers=workers,
                                  world_size=1, rank=0, **extra)
for epoch in range(2):
    if hasattr(loader, "set_epoch"):
        loader.set_epoch(epoch)
    t, n = time.perf_counter(), 0
    for data, labels in loader:
        n += len(labels)
    seconds = time.perf_counter() - t
print(json.dumps({"img_s": n / seconds}))
"""

KINDS = ("torch_plain", "stoker_plain", "torch_recipe", "stoker_recipe")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--python-path", default="build/python")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.python_path), OMP_NUM_THREADS="1")
    rates = {k: [] for k in KINDS}
    for r in range(a.rounds):  # alternated: each kind sees the same machine
        for kind in KINDS if r % 2 == 0 else reversed(KINDS):
            out = subprocess.run([sys.executable, "-c", RUN, kind, a.data, str(a.workers)],
                                 env=env, check=True, capture_output=True, text=True).stdout
            rates[kind].append(json.loads(out.strip().splitlines()[-1])["img_s"])
            print(f"round {r}: {kind} {rates[kind][-1]:.0f} img/s", file=sys.stderr)
    med = {k: statistics.median(v) for k, v in rates.items()}
    for k in KINDS:
        print(f"{k:14s} {med[k]:7.0f} img/s  ({', '.join(f'{x:.0f}' for x in rates[k])})")
    print(f"stoker / torch: plain {med['stoker_plain'] / med['torch_plain']:.2f}x, "
          f"recipe {med['stoker_recipe'] / med['torch_recipe']:.2f}x")
    print(f"recipe / plain: stoker {med['stoker_recipe'] / med['stoker_plain']:.0%}, "
          f"torch {med['torch_recipe'] / med['torch_plain']:.0%}")


if __name__ == "__main__":
    main()
