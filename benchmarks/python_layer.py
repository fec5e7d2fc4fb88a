#!/usr/bin/python3
"""The Python layer's own cost, two builds of the package side by side: `import stoker`, and
one `next()` of a loader whose batches are always ready (the consumer never waits, so the
time is the layer's: the call into the runtime, the batch's arrays, the tensors).

    benchmarks/python_layer.py PKG_A PKG_B [--rounds N] [--chunks N]

PKG_A and PKG_B are folders holding a `stoker` package (a build's python/ folder). The two are
alternated, each measurement in a fresh process, N rounds; the output is one line per
measure with each side's median and range, and JSON with every figure (--json).

The loader: 8192 records of 16 bytes (batch_size 1: one next() per sample), one worker, a
fixed prefetch depth of 32, as numpy arrays and as torch tensors, after two whole epochs
(every slot used once). Then, --chunks times, the loop waits 20 ms for the ring to fill and
times 30 next(), every one finding its batch in the ring (the consumer's own cost, not the
producer's rate); the figure is the first quartile of the chunks."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

IMPORT = """
import time, sys
t = time.perf_counter()
import stoker
print(json.dumps({"import_ms": (time.perf_counter() - t) * 1e3,
                  "numpy": "numpy" in sys.modules, "torch": "torch" in sys.modules}))
"""

NEXT = """
import time, numpy as np, torch, stoker
records, chunks = sys.argv[1], int(sys.argv[2])
out = {}
for as_numpy in (True, False):
    loader = stoker.Loader.records(records, record_bytes=16, batch_size=1, world_size=1, rank=0,
                                   workers=1, prefetch=32, adaptive=False, shuffle=False,
                                   as_numpy=as_numpy)
    for epoch in range(2):  # every slot used, its memory touched, before anything is timed
        for batch in loader:
            pass
    times = []
    it = iter(loader)
    for chunk in range(chunks):
        time.sleep(0.02)  # the ring fills: 32 batches ahead
        t = time.perf_counter()
        for n in range(30):
            batch = next(it)
        times.append((time.perf_counter() - t) / 30 * 1e6)
    it.close()
    times.sort()
    out["next_us_numpy" if as_numpy else "next_us_torch"] = times[len(times) // 4]
    loader.close()
print(json.dumps(out))
"""


def run(pkg, code, *args):
    env = dict(os.environ, PYTHONPATH=pkg)
    r = subprocess.run([sys.executable, "-c", "import json, sys\n" + code, *args], env=env,
                       capture_output=True, text=True, check=True, cwd="/")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("packages", nargs=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--chunks", type=int, default=60)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    a.packages = [os.path.abspath(p) for p in a.packages]  # the runs start in /
    figures = {p: {} for p in a.packages}
    with tempfile.TemporaryDirectory(prefix="stoker-layer-") as d:
        records = os.path.join(d, "records.bin")
        with open(records, "wb") as f:
            f.write(os.urandom(16 * 8192))
        for _ in range(a.rounds):
            for pkg in a.packages:  # alternated: the two sides see the same machine
                for result in (run(pkg, IMPORT), run(pkg, NEXT, records, str(a.chunks))):
                    for key, value in result.items():
                        figures[pkg].setdefault(key, []).append(value)
    if a.json:
        print(json.dumps(figures, indent=1))
        return
    for key in ("import_ms", "next_us_numpy", "next_us_torch"):
        cells = []
        for pkg in a.packages:
            v = figures[pkg][key]
            cells.append(f"{statistics.median(v):8.2f} ({min(v):.2f}-{max(v):.2f})")
        print(f"{key:14s} " + "   ".join(cells))
    for pkg in a.packages:
        print(f"{pkg}: import loads numpy {any(figures[pkg]['numpy'])}, "
              f"torch {any(figures[pkg]['torch'])}")


if __name__ == "__main__":
    main()
