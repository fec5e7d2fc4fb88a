#!/usr/bin/python3
"""A/B of two `stoker` builds on the same image folders, in one run: `stoker bench images`
alternating A, B, A, B, ... (so load from anything else on the machine falls on both), then
each build's `--limit` (one thread, files in memory), also alternating. Prints medians and
writes the raw results as JSON.

  benchmarks/ab_images.py --a build-main/build/runtime/stoker --b build/runtime/stoker \\
      --images bench-data/images [--extra bench-data/images-png] [--runs 7]

`--extra` folders (e.g. PNG) are measured with build B only (A may not read them).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def bench(stoker, folder, args, limit=False):
    cmd = [stoker, "bench", "images", folder, "--json", "--world-size", "1", "--seed", "1"]
    if limit:
        cmd += ["--limit", "--seconds", str(args.seconds)]
    else:
        cmd += ["--batches", str(args.batches), "--epochs", "2"]
        if args.workers:
            cmd += ["--workers", str(args.workers)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def alternate(builds, folder, args, limit, key):
    runs = {name: [] for name in builds}
    for _ in range(args.runs):
        for name, stoker in builds.items():
            runs[name].append(bench(stoker, folder, args, limit))
    return {name: {"median": statistics.median(r[key] for r in rs), "runs": rs}
            for name, rs in runs.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="stoker binary A (e.g. main's build)")
    ap.add_argument("--b", required=True, help="stoker binary B (e.g. this branch)")
    ap.add_argument("--images", required=True, help="the clean JPEG folder both read")
    ap.add_argument("--extra", nargs="*", default=[], help="folders only B measures (PNG)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--batches", type=int, default=15, help="batches of 64 per epoch")
    ap.add_argument("--workers", type=int, default=0, help="default: the plan's")
    ap.add_argument("--seconds", type=float, default=2.0, help="per --limit measurement")
    ap.add_argument("--out", default="bench-data/ab_images.json")
    args = ap.parse_args()

    builds = {"A": args.a, "B": args.b}
    started = time.strftime("%Y-%m-%d %H:%M")
    load0 = os.getloadavg()
    result = {"started": started, "load_start": load0, "args": vars(args)}
    result["pipeline"] = alternate(builds, args.images, args, False, "samples_per_s")
    result["limit"] = alternate(builds, args.images, args, True, "pipeline_per_thread")
    result["full_decode"] = {n: {"median": statistics.median(
        r["full_decode_per_thread"] for r in v["runs"])} for n, v in result["limit"].items()}
    result["extra"] = {}
    for folder in args.extra:
        one = {"B": args.b}
        result["extra"][folder] = {
            "pipeline": alternate(one, folder, args, False, "samples_per_s")["B"],
            "limit": alternate(one, folder, args, True, "pipeline_per_thread")["B"]}
    result["load_end"] = os.getloadavg()
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)

    print(f"run of {started}, load average {load0[0]:.2f} at start, "
          f"{result['load_end'][0]:.2f} at end; {args.runs} alternated runs each, medians")
    for what, key in (("pipeline", "img/s (loader, 2 epochs)"),
                      ("limit", "img/s per thread (decode+transform)"),
                      ("full_decode", "img/s per thread (full decode)")):
        a, b = result[what]["A"]["median"], result[what]["B"]["median"]
        print(f"{args.images}: {key}: A {a:.0f}, B {b:.0f} ({100 * (b / a - 1):+.1f} %)")
        if what != "full_decode":
            for name in ("A", "B"):
                values = sorted(r["samples_per_s" if what == "pipeline" else
                                  "pipeline_per_thread"] for r in result[what][name]["runs"])
                print(f"    {name}: " + " ".join(f"{v:.0f}" for v in values))
    for folder, r in result["extra"].items():
        full = statistics.median(x["full_decode_per_thread"] for x in r["limit"]["runs"])
        print(f"{folder} (B): loader {r['pipeline']['median']:.0f} img/s, decode+transform "
              f"{r['limit']['median']:.0f} img/s per thread, full decode {full:.0f} per thread")
    print(f"raw: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
