#!/usr/bin/python3
"""Makes the side-by-side benchmark's data, if absent, in one folder (default ./bench-data):

  images/CLASS/NNNNN.jpg  4,000 photo-like JPEGs, about 500x375, 10 class folders, quality 90:
                          smooth gradients, soft blobs, gentle texture and a little grain
                          (photo-like entropy, not white noise). Sizes vary a little.
  tokens.u16              200M uint16 tokens (400 MB), flat, native byte order.

Deterministic (fixed seeds). Re-running keeps what exists. Uses Debian's python3-numpy and
python3-pil only.

  benchmarks/make_data.py [DIR] [--images N] [--tokens N]
"""
import argparse
import multiprocessing
import os
import sys

import numpy as np
from PIL import Image


def photo(rng, w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = x / w, y / h
    img = np.empty((h, w, 3), np.float32)
    base = rng.uniform(40, 200, 3)
    gx, gy = rng.uniform(-80, 80, 3), rng.uniform(-80, 80, 3)
    fx, fy = rng.uniform(0.02, 0.12, 2)
    texture = 14 * np.sin(x * fx + 3 * np.sin(y * fy))
    for c in range(3):
        img[..., c] = base[c] + gx[c] * u + gy[c] * v + texture
    for _ in range(6):
        bx, by = rng.uniform(0, w), rng.uniform(0, h)
        r = rng.uniform(0.03, 0.25) * (w + h)
        blob = np.exp(-((x - bx) ** 2 + (y - by) ** 2) / (r * r))
        img += blob[..., None] * rng.uniform(-80, 80, 3)
    img += rng.normal(0, 6.0, img.shape).astype(np.float32)  # sensor grain
    return np.clip(img, 0, 255).astype(np.uint8)


def make_image(job):
    i, path = job
    rng = np.random.default_rng(i)
    w, h = (500, 375) if rng.uniform() < 0.8 else (int(rng.integers(400, 640)), int(rng.integers(300, 480)))
    tmp = path + ".tmp"
    Image.fromarray(photo(rng, w, h)).save(tmp, "JPEG", quality=90)
    os.replace(tmp, path)  # never leave a half-written image behind


def make_images(root, count, classes=10):
    jobs = []
    for i in range(count):
        cls = os.path.join(root, "images", f"class_{i % classes:02d}")
        path = os.path.join(cls, f"{i:05d}.jpg")
        if not os.path.exists(path):
            os.makedirs(cls, exist_ok=True)
            jobs.append((i, path))
    with multiprocessing.Pool(os.cpu_count()) as pool:
        pool.map(make_image, jobs, chunksize=16)
    return len(jobs)


def make_tokens(root, count, chunk=16 << 20):
    path = os.path.join(root, "tokens.u16")
    if os.path.exists(path) and os.path.getsize(path) == 2 * count:
        return False
    rng = np.random.default_rng(1234)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        left = count
        while left:
            n = min(chunk, left)
            rng.integers(0, 50257, n, dtype=np.uint16).tofile(f)  # a GPT-2-sized vocabulary
            left -= n
    os.replace(tmp, path)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", default="bench-data")
    ap.add_argument("--images", type=int, default=4000)
    ap.add_argument("--tokens", type=int, default=200_000_000)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    made = make_images(a.dir, a.images)
    tok = make_tokens(a.dir, a.tokens)
    print(f"make_data: {a.dir}: {made} new images ({a.images} wanted), "
          f"tokens {'written' if tok else 'kept'} ({a.tokens} uint16)", file=sys.stderr)


if __name__ == "__main__":
    main()
