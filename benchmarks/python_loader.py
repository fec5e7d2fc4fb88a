#!/usr/bin/python3
"""The loader benchmark's image workload from Python, in one run:

  1. stoker.Loader.images from Python vs the C++ `stoker bench images` on the same images
     (goal: Python within 10 % of C++);
  2. torch's DataLoader on torchvision's ImageFolder pipeline (benchmarks/pytorch_loader.py's
     dataset) with **stoker.plan().torch_dataloader_kwargs(), vs PyTorch's defaults
     (num_workers=0), vs the common copy-pasted num_workers=8, prefetch_factor=2, and a small
     num_workers x prefetch_factor grid (its best point is the PyTorch reference).

Work: batch 64, RandomResizedCrop(224) + horizontal flip + normalize to float32 CHW, shuffled,
on the first --batches x 64 images of DIR/images (made by benchmarks/make_data.py), linked
into DIR/python-subset-N so that every loader reads the same files. Throughput = samples
over the wall time from the first batch request of epoch 0 to the end of the last epoch.
Every configuration runs in its own process; stoker C++ and Python alternate --repeats times
and the median is reported (the machine is shared).

  benchmarks/python_loader.py [--data DIR] [--stoker build/runtime/stoker]
                              [--python-path build/python] [--batches 16] [--epochs 2]
Prints a Markdown table for docs/benchmarks.md and writes the raw JSON next to the data.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BATCH = 64


# ---- one measurement (run in a child process: --one KIND JSON) ---------------------------
def timed_epochs(loader, epochs, set_epoch):
    first_ms, samples = [], 0
    t0 = time.perf_counter()
    for e in range(epochs):
        set_epoch(e)
        te = time.perf_counter()
        for i, (x, _) in enumerate(loader):
            if i == 0:
                first_ms.append((time.perf_counter() - te) * 1e3)
            samples += x.shape[0]
    wall = time.perf_counter() - t0
    return {"samples": samples, "wall_s": wall, "samples_per_s": samples / wall,
            "epoch_first_batch_ms": first_ms}


def cpu_list_text(cpus):
    """{0, 1, 2, 5} -> "0-2,5", as the C++ side writes CPU lists."""
    runs = []
    for c in sorted(cpus):
        if runs and runs[-1][1] == c - 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)


def one_stoker(cfg):
    import torch  # noqa: F401  imported before the loader starts, as a training script does

    import stoker

    loader = stoker.Loader.images(cfg["images"], batch_size=BATCH, size=224, seed=0,
                                  world_size=1, rank=0, workers=cfg.get("workers"))
    out = timed_epochs(loader, cfg["epochs"], loader.set_epoch)
    st = loader.stats()
    plan = loader.plan
    if hasattr(plan, "worker_shares"):  # where the workers ran (the loader's rule)
        used = {c for share in plan.worker_shares(st["workers"]) for c in share}
        cpus = cpu_list_text(used)
    else:  # an older module: its plan's worker CPUs
        cpus = plan.worker_cpus
    out.update(workers=st["workers"], depth=st["depth"], wait_share=st["wait_share"],
               worker_cpus=cpus)
    return out


def one_torch(cfg):
    import torch
    from torch.utils.data import DataLoader

    sys.path.insert(0, HERE)
    from pytorch_loader import make_dataset  # the same dataset as the loader benchmark's

    torch.manual_seed(0)
    torch.set_num_threads(1)
    ds, _ = make_dataset(types.SimpleNamespace(what="images", path=cfg["images"], size=224,
                                               samples=0, seq_len=0))
    if cfg["kwargs"] == "stoker":
        import stoker

        kwargs = stoker.plan().torch_dataloader_kwargs()
    else:
        kwargs = dict(cfg["kwargs"])
    shown = {k: v for k, v in kwargs.items() if k != "worker_init_fn"}
    loader = DataLoader(ds, batch_size=BATCH, shuffle=True, **kwargs)
    out = timed_epochs(loader, cfg["epochs"], lambda e: None)
    out["kwargs"] = shown
    return out


def one_cpp(cfg):
    cmd = [cfg["stoker"], "bench", "images", cfg["images"], "--batch-size", str(BATCH),
           "--epochs", str(cfg["epochs"]), "--json"]
    if cfg.get("workers"):
        cmd += ["--workers", str(cfg["workers"])]
    res = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                                    text=True).stdout.strip().splitlines()[-1])
    return {k: res[k] for k in ("samples", "wall_s", "samples_per_s", "epoch_first_batch_ms",
                                "workers", "worker_cpus", "wait_share")}


# ---- the driver ---------------------------------------------------------------------------
def run_one(kind, cfg, python_path):
    env = dict(os.environ, PYTHONPATH=python_path + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, os.path.abspath(__file__), "--one", kind, json.dumps(cfg)]
    print(f"  {kind} {cfg.get('kwargs', '')}", file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def make_subset(data, count):
    """DIR/python-subset-N: links to the first N images in ImageFolder order."""
    src = os.path.join(data, "images")
    dst = os.path.join(data, f"python-subset-{count}")
    if os.path.isdir(dst):
        return dst
    files = []
    for cls in sorted(os.listdir(src)):
        for name in sorted(os.listdir(os.path.join(src, cls))):
            if name.lower().endswith((".jpg", ".jpeg")):
                files.append((cls, name))
    if len(files) < count:
        sys.exit(f"python_loader: {src} has {len(files)} images, {count} needed "
                 f"(benchmarks/make_data.py {data})")
    tmp = dst + ".tmp"
    for cls, name in files[:count]:
        os.makedirs(os.path.join(tmp, cls), exist_ok=True)
        os.symlink(os.path.abspath(os.path.join(src, cls, name)), os.path.join(tmp, cls, name))
    os.replace(tmp, dst)
    return dst


def table(r):
    py = statistics.median(x["samples_per_s"] for x in r["stoker_python"])
    cpp = statistics.median(x["samples_per_s"] for x in r["stoker_cpp"])
    torch_runs = r["torch"]
    best = max(torch_runs, key=lambda x: x["samples_per_s"])
    s0 = r["stoker_python"][0]
    lines = [f"{r['cores']} cores, load average {' '.join(r['load_at_start'])} at start, "
             f"{' '.join(r['load_at_end'])} at end; batch {BATCH}, 224x224 float32 CHW, "
             f"{r['images']} images per epoch, {r['epochs']} epochs; stoker medians of "
             f"{r['repeats']} alternated runs.", "",
             "| loader | settings | img/s | vs PyTorch best |", "|---|---|---:|---:|"]

    def row(name, settings, rate):
        lines.append(f"| {name} | {settings} | {rate:,.0f} | "
                     f"{rate / best['samples_per_s']:.2f}x |")

    row("stoker C++ (`stoker bench images`)",
        f"{r['stoker_cpp'][0]['workers']} workers on CPUs {r['stoker_cpp'][0]['worker_cpus']}", cpp)
    row("stoker.Loader from Python",
        f"{s0['workers']} workers on CPUs {s0['worker_cpus']}; {py / cpp:.0%} of C++", py)
    for x in sorted(torch_runs, key=lambda x: -x["samples_per_s"]):
        kw = x["kwargs"]
        label = {"stoker": "DataLoader + torch_dataloader_kwargs()", "default": "DataLoader, "
                 "PyTorch defaults", "common": "DataLoader, copy-pasted setting"}.get(
                     x["name"], "DataLoader (grid)")
        if x is best:
            label += " (best)"
        settings = ", ".join(f"{k}={v}" for k, v in kw.items()) or "num_workers=0"
        row(label, settings, x["samples_per_s"])
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        kind, cfg = sys.argv[2], json.loads(sys.argv[3])
        print(json.dumps({"stoker": one_stoker, "torch": one_torch, "cpp": one_cpp}[kind](cfg)))
        return
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(os.getcwd(), "bench-data"))
    ap.add_argument("--stoker", default=os.path.join(ROOT, "build", "runtime", "stoker"))
    ap.add_argument("--python-path", default=os.path.join(ROOT, "build", "python"),
                    help="where the built `stoker` package is (default build/python)")
    ap.add_argument("--batches", type=int, default=16, help="batches of 64 per epoch")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="alternated stoker C++/Python runs")
    ap.add_argument("--workers", type=int, default=None,
                    help="stoker's worker threads, C++ and Python (default: the plan's)")
    ap.add_argument("--quick", action="store_true", help="no grid beyond the named settings")
    a = ap.parse_args()
    if not os.access(a.stoker, os.X_OK):
        sys.exit(f"python_loader: {a.stoker} not found: build first (cmake --build build)")
    if not os.path.isdir(os.path.join(a.data, "images")):
        subprocess.run([sys.executable, os.path.join(HERE, "make_data.py"), a.data], check=True)
    images = make_subset(a.data, a.batches * BATCH)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    cfg = {"images": images, "epochs": a.epochs, "stoker": a.stoker, "workers": a.workers}
    res = {"cores": len(os.sched_getaffinity(0)), "load_at_start": load, "epochs": a.epochs,
           "images": a.batches * BATCH, "repeats": a.repeats, "stoker_cpp": [],
           "stoker_python": [], "torch": []}
    for _ in range(a.repeats):
        res["stoker_cpp"].append(run_one("cpp", cfg, a.python_path))
        res["stoker_python"].append(run_one("stoker", cfg, a.python_path))
    named = [("stoker", "stoker"), ("default", {"num_workers": 0}),
             ("common", {"num_workers": 8, "prefetch_factor": 2, "persistent_workers": True})]
    grid = [] if a.quick else [
        (f"grid-{w}-{p}", {"num_workers": w, "prefetch_factor": p, "persistent_workers": True})
        for w, p in ((1, 2), (2, 2), (2, 4), (3, 2))]
    for name, kwargs in named + grid:
        out = run_one("torch", dict(cfg, kwargs=kwargs), a.python_path)
        out["name"] = name
        res["torch"].append(out)
    with open("/proc/loadavg") as f:
        res["load_at_end"] = f.read().split()[:3]
    path = os.path.join(a.data, "python_loader.json")
    with open(path, "w") as f:
        json.dump(res, f, indent=1)
    print(table(res))
    print(f"\n(raw results: {path})", file=sys.stderr)


if __name__ == "__main__":
    main()
