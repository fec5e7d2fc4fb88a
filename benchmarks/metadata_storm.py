#!/usr/bin/python3
"""The metadata storm of many ranks opening one image folder, side by side in one run: what
opening an image folder asks of the filesystem's metadata server, per rank and per job, and
the time to the first batch.

  benchmarks/metadata_storm.py [--files 200000] [--ranks 8] [--big 1000000] [--dir DIR]
                               [--latency-ms 0.5] [--before PYTHONPATH]

1. RANKS processes open a FILES-file tree at once (one job), each under strace -f -y, and
   the calls on the tree's paths are counted (stat of a path, openat, getdents64: the calls
   that ask a network filesystem's metadata server; and, apart, fstat of a file already open,
   which the client answers from what the open fetched): torchvision's
   ImageFolder; stoker as it was before (--before PYTHONPATH: a build of the commit before
   the shared listing, every rank walking and stat'ing every file); and this stoker, with
   each rank alone (no process group: each lists), then as one job (a gloo process group:
   rank 0 lists and the others take its index), without a cache, with an empty cache, and
   with the listing cached. stoker's opens include the content sample (at most 1024 files,
   on the rank that lists) and the first batches its loader reads before close() (the
   smallest ring: at most 2-3 batches of 8 a rank); torchvision's ImageFolder reads no file
   at construction.
2. One process, BIG files: the time to the first batch of stoker.Loader.images, with the
   cache empty (the walk), then again (the cached listing).
3. A network metadata server, modelled: the counted metadata calls of part 1 times
   LATENCY-MS each (a stated model, not a measured filesystem: no FUSE layer was built).

The trees are made once under DIR (default /var/tmp/stoker-metadata; BIG tiny JPEGs take
~4 GB of disk) and kept for the next run. Root not needed; strace must be installed.
"""
import argparse
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

# The smallest ring: the loader reads a few batches before close(), not dozens.
SMALLEST_RING = "batch_size=8, workers=1, prefetch=1, max_depth=1, held_batches=1, adaptive=False"
STOKER = f"import stoker, sys; stoker.Loader.images(sys.argv[1], {SMALLEST_RING}).close()"
# One job: a gloo group first (RANK, WORLD_SIZE, MASTER_* from the starter), as DDP has.
STOKER_JOB = ("import stoker, sys, torch.distributed as d; d.init_process_group('gloo'); "
              f"stoker.Loader.images(sys.argv[1], {SMALLEST_RING}).close(); d.barrier()")
TORCHVISION = "import sys, torchvision; torchvision.datasets.ImageFolder(sys.argv[1])"
# torch is imported before the clock starts: every PyTorch job pays for it (about 1 s here),
# listing or not.
FIRST_BATCH = ("import torch, stoker, sys, time; t = time.monotonic(); "
               "l = stoker.Loader.images(sys.argv[1], batch_size=64); l.set_epoch(0); "
               "next(iter(l)); print(time.monotonic() - t); l.close()")
TORCHVISION_LIST = ("import torch, torchvision, sys, time; t = time.monotonic(); "
                    "torchvision.datasets.ImageFolder(sys.argv[1]); print(time.monotonic() - t)")


def make_tree(root, files, per_class=1000):
    """root/cNNNN/NNNNNN.jpg: tiny real JPEGs, `per_class` a folder, made once."""
    done = os.path.join(root, ".complete")
    if os.path.exists(done):
        return
    from PIL import Image
    shutil.rmtree(root, ignore_errors=True)
    jpegs = []
    for shade in range(16):
        b = io.BytesIO()
        Image.new("RGB", (16, 16), (shade * 16, 255 - shade * 16, 128)).save(b, "JPEG")
        jpegs.append(b.getvalue())
    for i in range(files):
        folder = os.path.join(root, f"c{i // per_class:04d}")
        if i % per_class == 0:
            os.makedirs(folder)
        with open(os.path.join(folder, f"{i:07d}.jpg"), "wb") as f:
            f.write(jpegs[i % len(jpegs)])
    # An hour old: stoker does not keep a listing of folders changed in the last seconds.
    past = time.time() - 3600
    for folder, _, _ in os.walk(root):
        os.utime(folder, (past, past))
    open(done, "w").close()


def traced_job(probe, root, ranks, env, work):
    """Runs `ranks` processes of `probe` at once under strace (rank r with RANK=r,
    WORLD_SIZE, MASTER_ADDR/PORT on the loopback); calls on `root`'s paths."""
    trace = os.path.join(work, "trace")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    starter = ("import os, subprocess, sys; ps = [subprocess.Popen([sys.executable, '-c', "
               f"{probe!r}, {root!r}], env=dict(os.environ, RANK=str(r), "
               f"WORLD_SIZE='{ranks}', MASTER_ADDR='127.0.0.1', MASTER_PORT='{port}')) "
               f"for r in range({ranks})]; sys.exit(max(p.wait() for p in ps))")
    got = subprocess.run(["strace", "-f", "-qq", "-y", "-e",
                          "trace=%%stat,openat,getdents64", "-o", trace, sys.executable, "-c",
                          starter], env=env, capture_output=True, text=True)
    if got.returncode != 0:
        raise SystemExit(f"metadata_storm: the job failed: {got.stderr[-2000:]}")
    counts = {"stat": 0, "fstat": 0, "openat": 0, "getdents64": 0}
    with open(trace) as f:
        for line in f:
            if root not in line or "resumed>" in line:  # a call strace split in two: once
                continue
            name = line.split()[1].split("(")[0]
            if "stat" in name:  # of a path, or of a file already open (a descriptor first)
                args = line.split("(", 1)[1]
                name = "fstat" if name == "fstat" or args[:1].isdigit() else "stat"
            counts[name] += 1
    os.remove(trace)
    return counts


def seconds(probe, root, env):
    got = subprocess.run([sys.executable, "-c", probe, root], env=env,
                         capture_output=True, text=True)
    if got.returncode != 0:
        raise SystemExit(f"metadata_storm: {probe[:40]}... failed: {got.stderr[-2000:]}")
    return float(got.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--big", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/var/tmp/stoker-metadata")
    ap.add_argument("--latency-ms", type=float, default=0.5)
    ap.add_argument("--before", help="PYTHONPATH of the stoker before, for its rows")
    a = ap.parse_args()
    if shutil.which("strace") is None:
        raise SystemExit("metadata_storm: strace is not installed")
    work = tempfile.mkdtemp(prefix="stoker-metadata-")
    small, big = os.path.join(a.dir, f"tree-{a.files}"), os.path.join(a.dir, f"tree-{a.big}")
    t = time.monotonic()
    make_tree(small, a.files)
    print(f"tree of {a.files} files: ready in {time.monotonic() - t:.0f} s", flush=True)
    cache = os.path.join(work, "cache")
    # The build's module unless PYTHONPATH names one (an installed stoker is found anyway).
    build = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "python")
    base = dict(os.environ, OMP_NUM_THREADS="1",
                PYTHONPATH=os.environ.get("PYTHONPATH", os.path.abspath(build)))
    rows = [("torchvision ImageFolder", TORCHVISION, dict(base))]
    if a.before:
        old = dict(base, PYTHONPATH=a.before)
        rows += [("stoker before, no cache", STOKER, dict(old, STOKER_CACHE_DIR="none")),
                 ("stoker before, first job (empty cache)", STOKER,
                  dict(old, STOKER_CACHE_DIR=cache + "-before")),
                 ("stoker before, second job (cached)", STOKER,
                  dict(old, STOKER_CACHE_DIR=cache + "-before"))]
    rows += [
        ("stoker, ranks alone, no cache (each lists)", STOKER, dict(base, STOKER_CACHE_DIR="none")),
        ("stoker, one job, no cache (rank 0 lists)", STOKER_JOB,
         dict(base, STOKER_CACHE_DIR="none")),
        ("stoker, one job, first (empty cache)", STOKER_JOB, dict(base, STOKER_CACHE_DIR=cache)),
        ("stoker, one job, second (cached listing)", STOKER_JOB,
         dict(base, STOKER_CACHE_DIR=cache)),
    ]
    print(f"\n{a.ranks} ranks open {a.files} files in {a.files // 1000} folders: calls on the "
          f"tree per job (per rank); model: {a.latency_ms} ms of the metadata server a call")
    print("| | stat of a path | openat | getdents64 | metadata calls per job | modelled s per "
          "job | fstat of an open file |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, probe, env in rows:
        c = traced_job(probe, small, a.ranks, env, work)
        job = c["stat"] + c["openat"] + c["getdents64"]
        cells = " | ".join(f"{c[k]:,} ({c[k] // a.ranks:,})" for k in ("stat", "openat", "getdents64"))
        print(f"| {name} | {cells} | {job:,} | {job * a.latency_ms / 1000:.2f} | "
              f"{c['fstat']:,} ({c['fstat'] // a.ranks:,}) |", flush=True)
    if a.big:
        t = time.monotonic()
        make_tree(big, a.big)
        print(f"\ntree of {a.big} files: ready in {time.monotonic() - t:.0f} s", flush=True)
        env = dict(base, STOKER_CACHE_DIR=os.path.join(work, "big-cache"))
        cold = seconds(FIRST_BATCH, big, env)
        warm = seconds(FIRST_BATCH, big, env)
        none = seconds(FIRST_BATCH, big, dict(base, STOKER_CACHE_DIR="none"))
        tv = seconds(TORCHVISION_LIST, big, base)
        print(f"time to the first batch, {a.big} files (page cache warm after the first): "
              f"empty cache {cold:.2f} s, cached listing {warm:.2f} s, no cache {none:.2f} s; "
              f"torchvision's ImageFolder lists them in {tv:.2f} s")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
