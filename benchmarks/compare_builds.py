#!/usr/bin/python3
"""`stoker bench` of two builds of stoker (say main and a branch), alternated in one run, so
that a change can be shown to keep (or move) throughput and the plan's figures:

  images      stoker bench images: the plan's workers, then --workers 2
  tokens      stoker bench tokens (400 batches of 16 windows, --token-epochs): the plan's
              workers, then --workers 2
  python      stoker.Loader.images from Python with workers=2 (the build's python/ folder)
  step        stoker bench images, 8 batches per epoch, with a simulated GPU step (--step-ms)
              slow enough that the loader keeps up: the next epoch's first batch is made ahead

A second table gives what the loader's wait counter drives, medians per build: the share of
the wall time the consumer waited (wait_share), the depth the controller ended at (every
run's), and each epoch's first-batch wait.

Every run is its own process; the builds alternate A B B A A B ... --repeats times per
workload, and the table gives medians with the plan's figures (workers, their CPUs, the depth
at the start and the end). The image workload is benchmarks/python_loader.py's: the first
--batches x 64 images of DIR/images (benchmarks/make_data.py), batch 64, 224x224 float32.

  benchmarks/compare_builds.py BUILD_A BUILD_B [--data bench-data] [--repeats 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from python_loader import BATCH, make_subset, run_one  # noqa: E402  the same workload


def bench(build, what, path, args):
    cmd = [os.path.join(build, "runtime", "stoker"), "bench", what, path, "--json"] + args
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def workloads(a):
    images = make_subset(a.data, a.batches * BATCH)
    tokens = os.path.join(a.data, "tokens.u16")
    img = ["--batch-size", str(BATCH), "--epochs", str(a.epochs)]
    tok = ["--batches", "400", "--epochs", str(a.token_epochs)]
    return [
        ("images, the plan's workers", lambda b: bench(b, "images", images, img)),
        ("images, --workers 2", lambda b: bench(b, "images", images, img + ["--workers", "2"])),
        ("tokens, the plan's workers", lambda b: bench(b, "tokens", tokens, tok)),
        ("tokens, --workers 2", lambda b: bench(b, "tokens", tokens, tok + ["--workers", "2"])),
        ("Python Loader.images, workers=2", lambda b: run_one(
            "stoker", {"images": images, "epochs": a.epochs, "workers": 2},
            os.path.join(b, "python"))),
        (f"images, 8 batches, a {a.step_ms} ms step", lambda b: bench(
            b, "images", images, ["--batch-size", str(BATCH), "--batches", "8", "--epochs", "2",
                                  "--step-ms", str(a.step_ms)])),
    ]


def counters(runs):
    """wait share, final depths, epoch first-batch waits (ms) of one build's runs."""
    share = statistics.median(x["wait_share"] for x in runs)
    depths = ",".join(str(x.get("prefetch_final", x.get("depth", "?"))) for x in runs)
    epochs = len(runs[0].get("epoch_first_batch_ms", []))
    first = [statistics.median(x["epoch_first_batch_ms"][e] for x in runs) for e in range(epochs)]
    return f"{100 * share:.1f} %", depths, " / ".join(f"{ms:.2f}" for ms in first)


def figures(run):
    depth = ""
    if "prefetch_start" in run:
        depth = f", depth {run['prefetch_start']} -> {run['prefetch_final']}"
        depth += f" (max {run['prefetch_max']})" if "prefetch_max" in run else ""
    return f"{run['workers']} workers on CPUs {run['worker_cpus']}{depth}"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="build folder A (the reference, e.g. main's)")
    ap.add_argument("b", help="build folder B (the change)")
    ap.add_argument("--data", default=os.path.join(os.getcwd(), "bench-data"))
    ap.add_argument("--batches", type=int, default=32, help="image batches of 64 per epoch")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--token-epochs", type=int, default=20,
                    help="epochs of 400 token batches (one takes ~15 ms: more for a steady rate)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--step-ms", type=float, default=150, help="the step workload's step")
    a = ap.parse_args()
    with open("/proc/loadavg") as f:
        load_start = f.read().split()[:3]
    rows = []
    for name, run in workloads(a):
        got = {a.a: [], a.b: []}
        for r in range(a.repeats):
            for build in (a.a, a.b) if r % 2 == 0 else (a.b, a.a):
                print(f"  {name}: {build}", file=sys.stderr, flush=True)
                got[build].append(run(build))
        rows.append((name, got))
    with open("/proc/loadavg") as f:
        load_end = f.read().split()[:3]
    print(f"{len(os.sched_getaffinity(0))} CPUs, load average {' '.join(load_start)} at start, "
          f"{' '.join(load_end)} at end; medians of {a.repeats} alternated runs each.\n")
    print(f"| workload | A: {a.a} samples/s | B: {a.b} samples/s | B / A | A's plan | B's plan |")
    print("|---|---:|---:|---:|---|---|")
    for name, got in rows:
        ma = statistics.median(x["samples_per_s"] for x in got[a.a])
        mb = statistics.median(x["samples_per_s"] for x in got[a.b])
        print(f"| {name} | {ma:,.0f} | {mb:,.0f} | {mb / ma:.2f} | {figures(got[a.a][0])} | "
              f"{figures(got[a.b][0])} |")
    print("\n| workload | A wait share | B wait share | A final depth (each run) | "
          "B final depth | A first batch ms (epoch 1 / 2) | B first batch ms |")
    print("|---|---:|---:|---|---|---:|---:|")
    for name, got in rows:
        ca, cb = counters(got[a.a]), counters(got[a.b])
        print(f"| {name} | {ca[0]} | {cb[0]} | {ca[1]} | {cb[1]} | {ca[2]} | {cb[2]} |")
    print("\nruns (samples/s): " + "; ".join(
        f"{name}: A {[round(x['samples_per_s']) for x in got[a.a]]} "
        f"B {[round(x['samples_per_s']) for x in got[a.b]]}" for name, got in rows),
          file=sys.stderr)


if __name__ == "__main__":
    main()
