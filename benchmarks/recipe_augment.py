#!/usr/bin/python3
"""The ResNet-50 recipe's augmentations: stoker against PyTorch's DataLoader on the same
images, cores and work, alternated in one run.

    benchmarks/recipe_augment.py DATA [--rounds 3] [--workers 2] [--python-path build/python]
    benchmarks/recipe_augment.py --describe     what each loader runs, nothing timed

DATA is a folder of class folders of JPEGs (benchmarks/make_data.py DIR --images 1024 --tokens 0
makes DIR/images). Four loaders, batch 64, 176 px (torchvision's recipe for its current
ResNet-50 weights), float32 CHW, normalised, each in a fresh process, one warm epoch, then one
timed epoch:
  torch plain   the reference's ClassificationPresetTrain(crop_size=176): RandomResizedCrop +
                flip, DataLoader(num_workers=W, prefetch_factor=2, persistent_workers=True)
  torch recipe  the same preset with auto_augment_policy="ta_wide", random_erase_prob=0.1:
                + TrivialAugmentWide after the flip (bilinear: the preset passes it its
                interpolation), RandomErasing(0.1) after Normalize
  stoker plain  Loader.images(size=176, workers=W) (bilinear)
  stoker recipe + the same two keyword arguments, which Loader.images names as the preset does
The preset is presets.py of torchvision's reference scripts (scripts/torchvision-references.sh
puts them in place; --references names another folder). Prints what each loader runs, each
one's median img/s over the rounds, stoker's ratio to torch for each, and what the
augmentations cost each (recipe / plain)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

SIZE = 176
RECIPE = {"auto_augment_policy": "ta_wide", "random_erase_prob": 0.1}


def torch_preset(references, recipe):
    """The reference's training preset at SIZE with `recipe`'s knobs."""
    sys.path.insert(0, references)
    import presets
    return presets.ClassificationPresetTrain(crop_size=SIZE, **recipe)


RUN = """
import json, sys, time
sys.path.insert(0, sys.argv[5])
from recipe_augment import SIZE, torch_preset
kind, root, workers, references = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
recipe = json.loads(sys.argv[6])
batch = 64
if kind.startswith("torch"):
    import torch
    from torchvision.datasets import ImageFolder
    loader = torch.utils.data.DataLoader(ImageFolder(root, torch_preset(references, recipe)),
                                         batch_size=batch, shuffle=True, num_workers=workers,
                                         prefetch_factor=2, persistent_workers=True,
                                         drop_last=False)
else:
    import stoker
    loader = stoker.Loader.images(root, batch_size=batch, size=SIZE, workers=workers,
                                  world_size=1, rank=0, **recipe)
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


def recipe_of(kind):
    return RECIPE if kind.endswith("_recipe") else {}


def describe(references, python_path):
    """One line per loader: the torch preset's transforms, stoker's Loader.images arguments
    (its interpolation the default that the package's Loader.images has)."""
    sys.path.insert(0, os.path.abspath(python_path))
    import inspect
    import stoker
    interpolation = inspect.signature(stoker.Loader.images).parameters["interpolation"].default
    lines = []
    for kind in KINDS:
        recipe = recipe_of(kind)
        if kind.startswith("torch"):
            steps = torch_preset(references, recipe).transforms.transforms
            what = ", ".join(repr(t).replace("\n", "") for t in steps)
        else:
            args = ", ".join(f"{k}={v!r}" for k, v in recipe.items())
            what = f"Loader.images(size={SIZE}, interpolation={interpolation!r}"
            what += f", {args})" if args else ")"
        lines.append(f"{kind:14s} {what}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--python-path", default="build/python")
    ap.add_argument("--references", help="torchvision's references/classification folder")
    ap.add_argument("--describe", action="store_true", help="print what each loader runs")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if not a.references:
        a.references = subprocess.run(
            [os.path.join(here, "..", "scripts", "torchvision-references.sh"), "--path"],
            check=True, capture_output=True, text=True).stdout.strip()
    if not os.path.isfile(os.path.join(a.references, "presets.py")):
        sys.exit(f"recipe_augment: no presets.py in {a.references}: run "
                 "scripts/torchvision-references.sh (or give --references)")
    print("\n".join(describe(a.references, a.python_path)))
    if a.describe:
        return
    if not a.data:
        ap.error("DATA is needed unless --describe is given")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.python_path), OMP_NUM_THREADS="1")
    rates = {k: [] for k in KINDS}
    for r in range(a.rounds):  # alternated: each kind sees the same machine
        for kind in KINDS if r % 2 == 0 else reversed(KINDS):
            cmd = [sys.executable, "-c", RUN, kind, a.data, str(a.workers), a.references, here,
                   json.dumps(recipe_of(kind))]
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
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
