#!/usr/bin/python3
"""Side-by-side: PyTorch's DataLoader vs stoker on the same data, work and cores, in one run.

  benchmarks/side_by_side.py [--data DIR] [--stoker build/runtime/stoker] [--quick]

1. Makes the data if absent (benchmarks/make_data.py DIR).
2. Images (batch 64, RandomResizedCrop(224) + flip + normalize to float32 CHW, 2 epochs):
   PyTorch over a grid of num_workers x prefetch_factor (persistent workers), its best point;
   stoker with the plan's automatic settings, and with one worker per core;
   the limits: one thread running stoker's decode+transform in a tight loop, and
   libjpeg-turbo's full decode alone, each x the worker cores (and x all cores).
3. Token windows (seq_len 2048, batch 16, uint16): PyTorch over np.memmap (grid) vs stoker.
Prints a Markdown table (paste into docs/benchmarks.md) and writes the raw JSON next to it.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_json(cmd):
    print("  $", " ".join(cmd), file=sys.stderr, flush=True)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def pytorch(what, path, workers, prefetch, common):
    return run_json([sys.executable, os.path.join(HERE, "pytorch_loader.py"), what, path,
                     "--workers", str(workers), "--prefetch", str(prefetch)] + common)


def stoker(binary, what, path, extra):
    return run_json([binary, "bench", what, path, "--json"] + extra)


def fmt_rate(x, unit):
    return f"{x:,.0f} {unit}" if unit != "GB/s" else f"{x / 1e9:.2f} GB/s"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "bench-data"))
    ap.add_argument("--stoker", default=os.path.join(ROOT, "build", "runtime", "stoker"))
    ap.add_argument("--image-batches", type=int, default=32, help="batches of 64 per epoch")
    ap.add_argument("--token-batches", type=int, default=400, help="batches of 16 per epoch")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="a 2-point PyTorch grid")
    ap.add_argument("--out", default=None, help="raw JSON results (default DATA/side_by_side.json)")
    a = ap.parse_args()
    if not os.access(a.stoker, os.X_OK):
        sys.exit(f"side_by_side: {a.stoker} not found: build first (cmake --build build)")
    subprocess.run([sys.executable, os.path.join(HERE, "make_data.py"), a.data], check=True)
    images, tokens = os.path.join(a.data, "images"), os.path.join(a.data, "tokens.u16")
    cores = len(os.sched_getaffinity(0))
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"side_by_side: {cores} cores, load average {' '.join(load)} at start", file=sys.stderr)
    grid = [(1, 2), (2, 2)] if a.quick else [(w, p) for w in (1, 2, 3, 4) for p in (2, 4)]
    res = {"cores": cores, "load_at_start": load, "started": time.strftime("%Y-%m-%d %H:%M:%S")}

    n_img = a.image_batches * 64
    common = ["--samples", str(n_img), "--epochs", str(a.epochs)]
    res["pytorch_images"] = [pytorch("images", images, w, p, common) for w, p in grid]
    sk = ["--batches", str(a.image_batches), "--epochs", str(a.epochs)]
    res["stoker_images_auto"] = stoker(a.stoker, "images", images, sk)
    res["stoker_images_all_cores"] = stoker(a.stoker, "images", images, sk + ["--workers", str(cores)])
    res["limit"] = stoker(a.stoker, "images", images, ["--limit", "--seconds", "3"])
    # Epoch boundary with a simulated GPU step (a sleep) slow enough that both loaders keep
    # up: the first batch of epoch 2 then shows whether it was prepared ahead.
    best = max(res["pytorch_images"], key=lambda x: x["samples_per_s"])
    step = round(1.5 * 64 / best["samples_per_s"] * 1e3, 1)
    res["step_ms"] = step
    res["pytorch_step"] = pytorch("images", images, best["workers"], best["prefetch_factor"],
                                  ["--samples", str(8 * 64), "--epochs", "2", "--step-ms", str(step)])
    res["stoker_step"] = stoker(a.stoker, "images", images,
                                ["--batches", "8", "--epochs", "2", "--step-ms", str(step)])

    n_tok = a.token_batches * 16
    tcommon = ["--samples", str(n_tok), "--epochs", str(a.epochs)]
    tgrid = [(0, 2), (1, 2), (2, 2)] if a.quick else [(0, 2), (1, 2), (2, 2), (2, 4), (4, 4)]
    res["pytorch_tokens"] = [pytorch("tokens", tokens, w, p, tcommon) for w, p in tgrid]
    tk = ["--batches", str(a.token_batches), "--epochs", str(a.epochs)]
    res["stoker_tokens_auto"] = stoker(a.stoker, "tokens", tokens, tk)
    res["stoker_tokens_all_cores"] = stoker(a.stoker, "tokens", tokens, tk + ["--workers", str(cores)])
    with open("/proc/loadavg") as f:
        res["load_at_end"] = f.read().split()[:3]

    out = a.out or os.path.join(a.data, "side_by_side.json")
    with open(out, "w") as f:
        json.dump(res, f, indent=1)
    print(table(res))
    print(f"\n(raw results: {out})", file=sys.stderr)


def table(r):
    best = max(r["pytorch_images"], key=lambda x: x["samples_per_s"])
    lim = r["limit"]
    lines = [f"Images: {r['cores']} cores, load average {' '.join(r['load_at_start'])} at start, "
             f"{' '.join(r['load_at_end'])} at end; batch 64, 224x224 float32 CHW, "
             f"{best['samples'] // best['epochs']} images per epoch, {best['epochs']} epochs.", "",
             "| loader | settings | img/s | vs PyTorch best | epoch 1 first batch | epoch 2 first batch | peak RSS |",
             "|---|---|---:|---:|---:|---:|---:|"]

    def row(name, settings, x):
        fb = x["epoch_first_batch_ms"] + [float("nan")] * 2
        lines.append(f"| {name} | {settings} | {x['samples_per_s']:,.0f} | "
                     f"{x['samples_per_s'] / best['samples_per_s']:.2f}x | {fb[0]:.1f} ms | {fb[1]:.1f} ms | "
                     f"{x['peak_rss_bytes'] / 2**20:,.0f} MiB |")

    for x in sorted(r["pytorch_images"], key=lambda x: -x["samples_per_s"]):
        tag = " (best)" if x is best else ""
        row("PyTorch DataLoader" + tag, f"num_workers={x['workers']}, prefetch_factor={x['prefetch_factor']}", x)
    for key, name in (("stoker_images_auto", "stoker (automatic)"), ("stoker_images_all_cores", "stoker (one worker per core)")):
        x = r[key]
        row(name, f"{x['workers']} workers on CPUs {x['worker_cpus']}, depth {x['prefetch_start']} -> {x['prefetch_final']}", x)
    w_auto, w_all = r["stoker_images_auto"]["workers"], r["stoker_images_all_cores"]["workers"]
    per = lim["pipeline_per_thread"]
    lines += ["", "| limit (one thread, files in memory) | per thread | x auto workers | stoker auto / limit | x all cores | stoker all cores / limit |",
              "|---|---:|---:|---:|---:|---:|"]
    for name, v in (("stoker decode+transform", per), ("libjpeg-turbo full decode", lim["full_decode_per_thread"])):
        lines.append(f"| {name} | {v:,.0f} img/s | {v * w_auto:,.0f} | "
                     f"{r['stoker_images_auto']['samples_per_s'] / (v * w_auto):.0%} | {v * w_all:,.0f} | "
                     f"{r['stoker_images_all_cores']['samples_per_s'] / (v * w_all):.0%} |")
    ps, ss = r["pytorch_step"], r["stoker_step"]
    lines += ["", f"Epoch boundary with a simulated GPU step of {r['step_ms']} ms per batch (a sleep; "
              "both loaders keep up), 8 batches per epoch:", "",
              "| loader | epoch 1 first batch | epoch 2 first batch | img/s |", "|---|---:|---:|---:|",
              f"| PyTorch DataLoader (best point, persistent workers) | {ps['epoch_first_batch_ms'][0]:.1f} ms | "
              f"{ps['epoch_first_batch_ms'][1]:.1f} ms | {ps['samples_per_s']:,.0f} |",
              f"| stoker (automatic) | {ss['epoch_first_batch_ms'][0]:.1f} ms | "
              f"{ss['epoch_first_batch_ms'][1]:.2f} ms | {ss['samples_per_s']:,.0f} |"]
    tb = max(r["pytorch_tokens"], key=lambda x: x["bytes_per_s"])
    lines += ["", f"Token windows: seq_len 2048 (+1), batch 16, uint16 file; "
              f"{tb['samples'] // tb['epochs']} windows per epoch, {tb['epochs']} epochs.", "",
              "| loader | settings | windows/s | GB/s | vs PyTorch best | epoch 2 first batch | peak RSS |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for x in sorted(r["pytorch_tokens"], key=lambda x: -x["bytes_per_s"]):
        tag = " (best)" if x is tb else ""
        lines.append(f"| PyTorch DataLoader{tag} | num_workers={x['workers']}, prefetch_factor={x['prefetch_factor']} | "
                     f"{x['samples_per_s']:,.0f} | {x['bytes_per_s'] / 1e9:.2f} | {x['bytes_per_s'] / tb['bytes_per_s']:.2f}x | "
                     f"{x['epoch_first_batch_ms'][-1]:.1f} ms | {x['peak_rss_bytes'] / 2**20:,.0f} MiB |")
    for key, name in (("stoker_tokens_auto", "stoker (automatic)"), ("stoker_tokens_all_cores", "stoker (one worker per core)")):
        x = r[key]
        lines.append(f"| {name} | {x['workers']} workers, depth {x['prefetch_start']} -> {x['prefetch_final']} | "
                     f"{x['samples_per_s']:,.0f} | {x['bytes_per_s'] / 1e9:.2f} | {x['bytes_per_s'] / tb['bytes_per_s']:.2f}x | "
                     f"{x['epoch_first_batch_ms'][-1]:.2f} ms | {x['peak_rss_bytes'] / 2**20:,.0f} MiB |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
