#!/usr/bin/env python3
"""iter() to the first index, and the memory it takes, for stoker.DistributedSampler and
torch's DistributedSampler side by side, at 10^7 samples (docs/benchmarks.md).

    PYTHONPATH=build/python benchmarks/sampler_first_index.py [--size 10000000] [--repeat 5]

Each class runs in a fresh process (so one's memory cannot hide in the other's): build the
sampler over range(size) with 2 ranks, shuffle on, then for each of `repeat` epochs time
set_epoch + iter() + next() (the wait a training loop sees before its first batch) and the
growth of the process's peak resident memory (ru_maxrss) over the whole walk. Prints one JSON
line per class and a table.
"""
import argparse
import json
import resource
import statistics
import subprocess
import sys
import time


def measure(kind, size, repeat):
    options = {}
    if kind == "stoker":
        import stoker
        make = stoker.DistributedSampler
        options["agree"] = False  # one process playing rank 0 of 2: no other rank to ask
    else:
        from torch.utils.data.distributed import DistributedSampler as make
    sampler = make(range(size), num_replicas=2, rank=0, shuffle=True, seed=0, **options)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    firsts = []
    for epoch in range(repeat):
        start = time.perf_counter()
        sampler.set_epoch(epoch)
        walk = iter(sampler)
        next(walk)
        firsts.append(time.perf_counter() - start)
        del walk
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return {"class": kind, "size": size, "first_index_s": firsts,
            "median_first_index_ms": statistics.median(firsts) * 1e3,
            "peak_rss_growth_mib": grown / 1024}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--size", type=int, default=10**7)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--one", choices=("stoker", "torch"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.size, args.repeat)))
        return 0
    rows = []
    for kind in ("stoker", "torch"):
        out = subprocess.run([sys.executable, __file__, "--one", kind, "--size", str(args.size),
                              "--repeat", str(args.repeat)], check=True, text=True,
                             stdout=subprocess.PIPE).stdout
        rows.append(json.loads(out))
        print(out.strip())
    print(f"\n| class | iter() to the first index (median of {args.repeat}) | peak RSS growth |")
    print("|---|---:|---:|")
    for r in rows:
        print(f"| {r['class']} | {r['median_first_index_ms']:.3f} ms | "
              f"{r['peak_rss_growth_mib']:.0f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
