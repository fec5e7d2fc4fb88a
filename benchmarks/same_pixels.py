#!/usr/bin/python3
"""Do two builds of stoker deliver the same pixels? Runs Loader.images over the same images
with each build's Python module (each in its own process), for the train and eval transforms
in float32/float16 CHW, uint8 HWC and float32 HWC, and compares the batches byte for byte.
A kernel or decoder change that is meant to keep the output is checked with it (
the AVX2 resample kernel against e57534e's code, and STOKER_SIMD=portable against both).

  benchmarks/same_pixels.py BUILD_A BUILD_B [--images DIR] [--count 192] [--env-b K=V ...]
    BUILD_*   build folders (their python/ is put on PYTHONPATH)
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

DUMP = r"""
import sys, numpy as np, stoker
out, root = sys.argv[1], sys.argv[2]
res = {}
for train in (False, True):
    for dtype, layout in (("float32", "CHW"), ("float16", "CHW"), ("uint8", "HWC"),
                          ("float32", "HWC")):
        kw = dict(batch_size=16, size=224, train=train, dtype=dtype, layout=layout,
                  shuffle=False, world_size=1, rank=0, seed=3)
        if not train:
            kw["resize_shorter"] = 256
        res[f"{'train' if train else 'eval'} {dtype} {layout}"] = np.concatenate(
            [b.numpy().copy() for b, _ in stoker.Loader.images(root, **kw)])
np.savez(out, **res)
"""


def dump(build, images, out, env):
    subprocess.run([sys.executable, "-c", DUMP, out, images], check=True,
                   env={**os.environ, "PYTHONPATH": os.path.join(build, "python"), **env})
    return np.load(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--images", default="bench-data/images/class_01")
    ap.add_argument("--count", type=int, default=192)
    ap.add_argument("--env-b", nargs="*", default=[],
                    help="K=V set for build B only (STOKER_SIMD=portable)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "images", "c0")
        os.makedirs(folder)
        for name in sorted(os.listdir(a.images))[:a.count]:
            os.symlink(os.path.abspath(os.path.join(a.images, name)), os.path.join(folder, name))
        x = dump(a.a, os.path.dirname(folder), os.path.join(tmp, "a.npz"), {})
        y = dump(a.b, os.path.dirname(folder), os.path.join(tmp, "b.npz"),
                 dict(kv.split("=", 1) for kv in a.env_b))
        same = True
        for k in x.files:
            d = np.abs(x[k].astype(np.float64) - y[k].astype(np.float64))
            equal = np.array_equal(x[k], y[k])
            same &= equal
            print(f"{k:22} {x[k].shape[0]} images: {'same bytes' if equal else 'DIFFERENT'}"
                  f" (max |diff| {d.max():g}, mean {d.mean():g})")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
