#!/usr/bin/env python3
"""Checks the JSON lines of two_ranks.py (from files or stdin): for every epoch, the ranks'
shards have equal lengths, are pairwise disjoint, and together cover the dataset exactly
once. Exit status 0 when they do, 1 with the reason otherwise.

usage: check_two_ranks.py [OUTPUT_FILE...]          (stdin when none)
       check_two_ranks.py --local DATA_FILE         (runs 2 ranks here via RANK/WORLD_SIZE)
"""
import json
import os
import subprocess
import sys


def check(lines, ranks=2):
    records = [json.loads(line) for line in lines if line.strip().startswith("{")]
    if not records:
        return "no JSON lines from two_ranks.py"
    by_epoch = {}
    for r in records:
        by_epoch.setdefault(r["epoch"], {})[r["rank"]] = r
    for epoch, shards in sorted(by_epoch.items()):
        if sorted(shards) != list(range(ranks)):
            return f"epoch {epoch}: ranks {sorted(shards)} reported, expected 0..{ranks - 1}"
        size = {s["size"] for s in shards.values()}
        if len(size) != 1:
            return f"epoch {epoch}: ranks disagree on the dataset size: {size}"
        size = size.pop()
        lengths = {rank: len(s["indices"]) for rank, s in shards.items()}
        if len(set(lengths.values())) != 1:
            return f"epoch {epoch}: uneven shards {lengths}"
        seen = {}
        for rank, s in shards.items():
            for i in s["indices"]:
                if i in seen:
                    return f"epoch {epoch}: index {i} read by rank {seen[i]} and rank {rank}"
                seen[i] = rank
        if sorted(seen) != list(range(size)):
            missing = sorted(set(range(size)) - set(seen))
            return f"epoch {epoch}: {len(missing)} indices never read, e.g. {missing[:5]}"
    orders = [tuple(by_epoch[e][0]["indices"]) for e in sorted(by_epoch)]
    if len(orders) > 1 and len(set(orders)) == 1:
        return "every epoch had the same order: set_epoch did not reshuffle"
    return None


def run_local(data):
    here = os.path.dirname(os.path.abspath(__file__))
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE="2")
        for name in ("SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"):
            env.pop(name, None)
        procs.append(subprocess.Popen([sys.executable, os.path.join(here, "two_ranks.py"), data],
                                      env=env, stdout=subprocess.PIPE, text=True))
    lines = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        if p.returncode != 0:
            return [], f"a rank exited with status {p.returncode}"
        lines += out.splitlines()
    return lines, None


def main():
    args = sys.argv[1:]
    if args[:1] == ["--local"] and len(args) == 2:
        lines, error = run_local(args[1])
    else:
        lines, error = [], None
        if args:
            for path in args:
                with open(path) as f:
                    lines += f.read().splitlines()
        else:
            lines = sys.stdin.read().splitlines()
    error = error or check(lines)
    if error:
        print(f"check_two_ranks: FAIL: {error}", file=sys.stderr)
        sys.exit(1)
    epochs = len({json.loads(line)["epoch"] for line in lines if line.startswith("{")})
    print(f"check_two_ranks: OK: 2 ranks, {epochs} epochs, disjoint and complete shards")


if __name__ == "__main__":
    main()
