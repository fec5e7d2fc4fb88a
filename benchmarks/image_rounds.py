#!/usr/bin/python3
"""Images, PyTorch against stoker in rounds: the same data, work and cores, alternated in one run.

  benchmarks/image_rounds.py [--data DIR] [--stoker build/runtime/stoker] [--before OLD_STOKER]
                             [--rounds 3] [--grid quick|full]

1. PyTorch's DataLoader over a grid of num_workers x prefetch_factor: its best point.
2. Rounds, alternated: PyTorch's best point; stoker with one worker per core (the cores
   PyTorch's workers share); the same with STOKER_SIMD=portable; and with --before, an older
   stoker binary (the "before" of a change, same data, same run).
3. The per-thread limits (`stoker bench images --limit`): the pipeline (train, eval, uint8
   HWC) with each resample kernel and the old binary, and libjpeg-turbo's full decode.
Work: RandomResizedCrop(224) + flip + normalize, float32 CHW, batch 64, 2 epochs of
--batches batches. Prints Markdown tables (docs/benchmarks.md) and writes the raw JSON.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_json(cmd, env=None):
    print("  $", " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True,
                         env={**os.environ, **(env or {})}).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "bench-data"))
    ap.add_argument("--stoker", default=os.path.join(ROOT, "build", "runtime", "stoker"))
    ap.add_argument("--before", help="an older stoker binary to run beside it")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", type=int, default=32, help="batches of 64 per epoch")
    ap.add_argument("--grid", choices=("quick", "full"), default="full")
    ap.add_argument("--limit-seconds", default="3")
    ap.add_argument("--out")
    a = ap.parse_args()
    images = os.path.join(a.data, "images")
    if not os.path.isdir(images):
        sys.exit(f"image_rounds: {images} missing: run benchmarks/make_data.py {a.data} first")
    cores = len(os.sched_getaffinity(0))
    with open("/proc/loadavg") as f:
        res = {"cores": cores, "load_at_start": f.read().split()[:3],
               "started": time.strftime("%Y-%m-%d %H:%M:%S"), "rounds": []}
    common = ["--samples", str(a.batches * 64), "--epochs", "2"]

    def pytorch(workers, prefetch):
        return run_json([sys.executable, os.path.join(HERE, "pytorch_loader.py"), "images", images,
                         "--workers", str(workers), "--prefetch", str(prefetch)] + common)

    def stoker(binary, extra, env=None):
        return run_json([binary, "bench", "images", images, "--json"] + extra, env)

    grid = [(2, 2), (3, 4)] if a.grid == "quick" else [(w, p) for w in (1, 2, 3, 4) for p in (2, 4)]
    res["pytorch_grid"] = [pytorch(w, p) for w, p in grid]
    best = max(res["pytorch_grid"], key=lambda x: x["samples_per_s"])
    loader = ["--batches", str(a.batches), "--epochs", "2", "--workers", str(cores)]
    for _ in range(a.rounds):
        r = {"pytorch": pytorch(best["workers"], best["prefetch_factor"]),
             "stoker": stoker(a.stoker, loader),
             "stoker_portable": stoker(a.stoker, loader, {"STOKER_SIMD": "portable"})}
        if a.before:
            r["before"] = stoker(a.before, loader)
        res["rounds"].append(r)
    lim = ["--limit", "--seconds", a.limit_seconds]
    variants = {"train": [], "eval": ["--eval"], "uint8 HWC": ["--dtype", "uint8", "--layout", "HWC"]}
    res["limits"] = {}
    for name, extra in variants.items():
        res["limits"][name] = {"avx2": stoker(a.stoker, lim + extra),
                               "portable": stoker(a.stoker, lim + extra, {"STOKER_SIMD": "portable"})}
        if a.before:
            res["limits"][name]["before"] = stoker(a.before, lim + extra)
    with open("/proc/loadavg") as f:
        res["load_at_end"] = f.read().split()[:3]
    out = a.out or os.path.join(a.data, "image_rounds.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(table(res, best))
    print(f"\n(raw results: {out})", file=sys.stderr)


def table(r, best):
    keys = [k for k in ("pytorch", "stoker", "stoker_portable", "before") if k in r["rounds"][0]]
    names = {"pytorch": f"PyTorch DataLoader (num_workers={best['workers']}, "
                        f"prefetch_factor={best['prefetch_factor']})",
             "stoker": "stoker (resample avx2)", "stoker_portable": "stoker (STOKER_SIMD=portable)",
             "before": "stoker before (--before binary)"}
    lines = [f"{r['cores']} cores, load average {' '.join(r['load_at_start'])} at start, "
             f"{' '.join(r['load_at_end'])} at end. PyTorch grid best: {best['samples_per_s']:,.0f} img/s.",
             "", "| loader | " + " | ".join(f"round {i + 1}" for i in range(len(r["rounds"])))
             + " | median | vs PyTorch (median) | peak RSS (max) |",
             "|---|" + "---:|" * (len(r["rounds"]) + 3)]
    med = {}
    for k in keys:
        v = [x[k]["samples_per_s"] for x in r["rounds"]]
        med[k] = statistics.median(v)
        rss = max(x[k]["peak_rss_bytes"] for x in r["rounds"]) / 2**20
        lines.append(f"| {names[k]} | " + " | ".join(f"{x:,.0f}" for x in v) +
                     f" | {med[k]:,.0f} | {med[k] / med['pytorch']:.2f}x | {rss:,.0f} MiB |")
    workers = r["rounds"][0]["stoker"]["workers"]
    lines += ["", "| per-thread limit (files in memory) | pipeline img/s | decode ms | transform ms |"
              " loader / (limit x workers) |", "|---|---:|---:|---:|---:|"]
    for name, by_kernel in r["limits"].items():
        for kernel, x in by_kernel.items():
            share = ""
            if name == "train" and kernel in ("avx2", "portable"):
                k = "stoker" if kernel == "avx2" else "stoker_portable"
                share = f"{med[k] / (x['pipeline_per_thread'] * workers):.0%}"
            lines.append(f"| {name}, {kernel} | {x['pipeline_per_thread']:,.0f} | {x['decode_ms']:.3f} | "
                         f"{x['transform_ms']:.3f} | {share} |")
    full = r["limits"]["train"]["avx2"]["full_decode_per_thread"]
    lines.append(f"| libjpeg-turbo full decode (RGB) | {full:,.0f} | | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
