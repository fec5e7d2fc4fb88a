#!/usr/bin/python3
"""WebP decode, one thread, stoker against PIL on the same files held in memory, alternated
in one run ("WebP decode per thread measured against PIL's in the same run").

Two sets from the real-image corpus (tests/corpus/corpus.py fetch): the GNOME wallpapers
(lossy, 4096 x 4096) and golang.org/x/image's test files (lossy, lossless, alpha; 75-600 px).
stoker: `stoker bench images --limit` (its full decode to RGB, decode_rgb). PIL:
Image.open(...).convert('RGB'), as torchvision's ImageFolder loader does.

  benchmarks/webp_vs_pil.py [--corpus /var/cache/stoker-corpus] [--rounds 3] [--seconds 4]
"""
import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = {"GNOME wallpapers (lossy, 4096 px)": "gnome-backgrounds/usr/share/backgrounds/gnome",
        "x/image test files (lossy, lossless, alpha)":
            "golang-golang-x-image-dev/usr/share/gocode/src/golang.org/x/image/testdata"}


def pil_rate(blobs, seconds):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds or n < len(blobs):
        Image.open(io.BytesIO(blobs[n % len(blobs)])).convert("RGB")
        n += 1
    return n / (time.perf_counter() - start)


def stoker_rate(stoker, folder, seconds):
    out = subprocess.run([stoker, "bench", "images", folder, "--limit", "--json", "--seconds",
                          str(seconds)], check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["full_decode_per_thread"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="/var/cache/stoker-corpus")
    ap.add_argument("--stoker", default=os.path.join(HERE, "..", "build", "runtime", "stoker"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4)
    a = ap.parse_args()
    print("| files | Mpx per file (mean) | stoker Mpx/s, rounds | PIL Mpx/s, rounds |"
          " stoker / PIL (medians) |")
    print("|---|---:|---|---|---:|")
    for name, sub in SETS.items():
        src = os.path.join(a.corpus, "root", sub)
        if not os.path.isdir(src):
            sys.exit(f"webp_vs_pil: {src} missing: run tests/corpus/corpus.py fetch first")
        names = sorted(f for f in os.listdir(src) if f.endswith(".webp"))
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "c0"))
            blobs = []
            for f in names:
                shutil.copy(os.path.join(src, f), os.path.join(tmp, "c0", f))
                with open(os.path.join(src, f), "rb") as fh:
                    blobs.append(fh.read())
            sizes = [Image.open(io.BytesIO(b)).size for b in blobs]
            mpx = sum(w * h for w, h in sizes) / len(blobs) / 1e6
            ours, theirs = [], []
            for _ in range(a.rounds):
                ours.append(stoker_rate(a.stoker, tmp, a.seconds) * mpx)
                theirs.append(pil_rate(blobs, a.seconds) * mpx)
        med = lambda v: sorted(v)[len(v) // 2]
        print(f"| {name}: {len(names)} | {mpx:.2f} | {', '.join(f'{x:.1f}' for x in ours)} | "
              f"{', '.join(f'{x:.1f}' for x in theirs)} | {med(ours) / med(theirs):.2f}x |")


if __name__ == "__main__":
    main()
