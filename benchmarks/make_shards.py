#!/usr/bin/python3
"""Packs an image folder (ImageNet layout: ROOT/CLASS/IMAGE.jpg) into WebDataset tar shards:
KEY.jpg + KEY.cls (the class index in sorted class order, as torchvision's ImageFolder),
samples in a seeded random order (as shards are written for training), PER samples a shard.

  benchmarks/make_shards.py ROOT OUT [--per 256] [--compress none|gz|zst]

Deterministic. Uses the Python standard library only (zstd: the `zstd` command).
"""
import argparse
import io
import os
import random
import subprocess
import tarfile


def images(root):
    classes = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    for label, c in enumerate(classes):
        folder = os.path.join(root, c)
        for name in sorted(os.listdir(folder)):
            if name.lower().endswith((".jpg", ".jpeg", ".png")):
                yield os.path.join(folder, name), label


def add(tar, name, payload):
    info = tarfile.TarInfo(name)
    info.size = len(payload)
    info.mtime = 0
    tar.addfile(info, io.BytesIO(payload))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("out")
    ap.add_argument("--per", type=int, default=256, help="samples per shard")
    ap.add_argument("--compress", choices=("none", "gz", "zst"), default="none")
    a = ap.parse_args()
    items = list(images(a.root))
    random.Random(0).shuffle(items)
    os.makedirs(a.out, exist_ok=True)
    for first in range(0, len(items), a.per):
        path = os.path.join(a.out, f"shard-{first // a.per:05d}.tar")
        with tarfile.open(path, "w:gz" if a.compress == "gz" else "w") as tar:
            for k, (image, label) in enumerate(items[first:first + a.per], start=first):
                ext = os.path.splitext(image)[1].lower()
                with open(image, "rb") as f:
                    add(tar, f"{k:08d}{ext}", f.read())
                add(tar, f"{k:08d}.cls", str(label).encode())
        if a.compress == "gz":
            os.replace(path, path + ".gz")
        elif a.compress == "zst":
            subprocess.run(["zstd", "-q", "--rm", "-f", path, "-o", path + ".zst"], check=True)
    print(f"make_shards: {len(items)} samples in {(len(items) + a.per - 1) // a.per} shards "
          f"under {a.out}")


if __name__ == "__main__":
    main()
