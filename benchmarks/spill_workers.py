#!/usr/bin/python3
"""The spill measured and on paper: the worker counts the planner gives a node's
ranks with SpillCores=yes and =no (from `stoker plan --topology ... --json`), then
`stoker bench images` on this machine with each count, alternating in one run (so load from
anything else falls on both), and `--limit` for one thread's decode+transform rate. Prints the
measured rates and the node's expected input rate on paper: ranks x workers x the per-thread
rate, before (SpillCores=no: the GPU-node-only plan) and after.

  benchmarks/spill_workers.py --stoker build/runtime/stoker --images DIR \\
      --topology ../shared/topologies/synthetic-epyc-nps4-2x32c-8gpu.xml --local-size 8 \\
      --profile cv [--runs 5] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def node_plan(args, spill):
    """Rows of the node's plan; SpillCores=no through a profiles file overriding the profile."""
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(f"Profile={args.profile} SpillCores={'yes' if spill else 'no'}\n")
        path = f.name
    try:
        return run_json([args.stoker, "plan", "--topology", args.topology, "--local-size",
                         str(args.local_size), "--profile", args.profile, "--profiles", path,
                         "--json"])["rows"]
    finally:
        os.unlink(path)


def bench(args, workers=None, limit=False):
    cmd = [args.stoker, "bench", "images", args.images, "--json", "--world-size", "1",
           "--seed", "1"]
    if limit:
        cmd += ["--limit", "--seconds", str(args.seconds)]
    else:
        cmd += ["--batch-size", "64", "--epochs", "2", "--workers", str(workers)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--stoker", default="build/runtime/stoker")
    p.add_argument("--images", required=True)
    p.add_argument("--topology", required=True)
    p.add_argument("--local-size", type=int, default=8)
    p.add_argument("--profile", default="cv")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seconds", type=float, default=3)
    p.add_argument("--json", help="write the raw results here")
    args = p.parse_args()

    plans = {"GPU node only (SpillCores=no)": node_plan(args, False),
             "spill (SpillCores=yes)": node_plan(args, True)}
    counts = {name: rows[0]["workers"] for name, rows in plans.items()}
    runs = {name: [] for name in plans}
    limits = []
    for _ in range(args.runs):
        for name in plans:
            runs[name].append(bench(args, workers=counts[name]))
        limits.append(bench(args, limit=True))
    per_thread = statistics.median(l["pipeline_per_thread"] for l in limits)
    load = os.getloadavg()[0]
    print(f"{os.path.basename(args.topology)}, {args.local_size} ranks, profile {args.profile}; "
          f"this machine: {os.cpu_count()} CPUs, load {load:.1f}")
    print(f"one thread's decode+transform (--limit, median of {len(limits)}): "
          f"{per_thread:.0f} img/s")
    print(f"{'plan':32} {'workers/rank':>12} {'worker cores/rank':>17} {'cores used':>10} "
          f"{'measured img/s (median)':>24} {'node on paper img/s':>20}")
    out = {"per_thread": per_thread, "load": load, "plans": {}}
    for name, rows in plans.items():
        w = counts[name]
        cores = sum(r["cores"] for r in rows)
        worker_cores = rows[0]["cores"] - 1
        measured = statistics.median(r["samples_per_s"] for r in runs[name])
        paper = sum(r["workers"] for r in rows) * per_thread
        print(f"{name:32} {w:>12} {worker_cores:>17} {cores:>10} {measured:>24.0f} "
              f"{paper:>20.0f}")
        out["plans"][name] = {"workers": w, "cores_used": cores, "measured": measured,
                              "runs": [r["samples_per_s"] for r in runs[name]],
                              "paper": paper, "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
