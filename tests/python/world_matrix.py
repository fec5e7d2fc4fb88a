#!/usr/bin/env python3
"""The launcher matrix: runs world_job.py's two phases under one launcher (2 ranks, then a
resume on 3) and judges what the ranks wrote. Exit 0 when every check holds, 1 with the
reason otherwise.

usage: world_matrix.py LAUNCH OUT_DIR [--expect-source TEXT] [--launcher WORDS]
  LAUNCH spawn-tcp | spawn-env | harness      world_job.py spawns its own ranks
         torchrun-standalone | torchrun-c10d  torchrun (torchrun.py), on the loopback
         launcher                             --launcher 'srun -n{n} ...' or 'mpirun -n {n}'
Checks: every rank sees the whole world (2, then 3) and says where it came from (and, under
a process group, refuses to iterate another rank's sampler, pickled to it); each epoch
covers the dataset exactly once with equal shards; set_epoch gives a new order; the ranks'
states agree; the resume on 3 ranks walks the rest of the epoch, losing and repeating
nothing; torch's padding test gives the same numbers for torch's class and stoker's; the
stoker.Loader reads its share of the batches, not all of them.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

from testdata import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "world_job.py")
SIZE, CONSUMED = 66, 6


def command(launch, phase, out_dir, ranks, launcher):
    job = [sys.executable, JOB]
    if launch in ("spawn-tcp", "spawn-env", "harness"):
        return job + [launch, phase, out_dir, "--ranks", str(ranks)]
    tail = ["env", phase, out_dir]
    run = [sys.executable, os.path.join(HERE, "torchrun.py"), f"--nproc_per_node={ranks}"]
    if launch == "torchrun-standalone":
        return run + ["--standalone", JOB] + tail
    if launch == "torchrun-c10d":
        return run + ["--nnodes=1", "--rdzv_backend=c10d",
                      f"--rdzv_endpoint=127.0.0.1:{free_port()}", JOB] + tail
    return shlex.split(launcher.format(n=ranks)) + [sys.executable, JOB] + tail


def records(out_dir, phase, ranks):
    out = []
    for r in range(ranks):
        path = os.path.join(out_dir, f"{phase}-rank{r}.json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            out.append(json.load(f))
    return out


def judge_first(ranks, expect_source):
    for r in ranks:
        if (r["num_replicas"], r["rank"]) != (2, ranks.index(r)):
            return f"rank {ranks.index(r)} took itself for rank {r['rank']} of {r['num_replicas']}"
        if expect_source and expect_source not in r["world_source"]:
            return f"world_source {r['world_source']!r}, expected it to name {expect_source!r}"
        if r["agreement"].startswith("single rank"):
            return f"agreement {r['agreement']!r} with 2 ranks"
    for epoch in (0, 1):
        shards = [r["epochs"][epoch] for r in ranks]
        if len({len(s) for s in shards}) != 1:
            return f"epoch {epoch}: uneven shards {[len(s) for s in shards]}"
        walked = sorted(shards[0] + shards[1])
        if walked != list(range(SIZE)):
            return f"epoch {epoch}: the ranks did not cover the {SIZE} samples exactly once"
    if any(r["epochs"][0] == r["epochs"][1] for r in ranks):
        return "set_epoch(1) gave the same order as epoch 0"
    if ranks[0].get("copy_len") != SIZE // 2:
        return f"rank 0's deep copy has {ranks[0].get('copy_len')} indices, not {SIZE // 2}"
    if ranks[0]["state"] != ranks[1]["state"]:
        return f"the ranks' states differ: {ranks[0]['state']} / {ranks[1]['state']}"
    for k, r in enumerate(ranks):
        other = (k + 1) % 2
        if "foreign" in r and f"made on rank {other} of 2 of a torch.distributed group, used " \
                f"on rank {k} of 2" not in r["foreign"]:
            return f"rank {k} iterated rank {other}'s sampler: {r['foreign']}"
        if "padding" in r and r["padding"]["stoker"] != r["padding"]["torch"]:
            return f"padding: stoker {r['padding']['stoker']} / torch {r['padding']['torch']}"
        loader = r["loader"]
        if loader["world_size"] != 2 or loader["read"] * 2 > loader["all_batches"] + 1:
            return f"the Loader read {loader['read']} of {loader['all_batches']} batches " \
                   f"with world_size {loader['world_size']} ({loader['world_source']})"
    return None


def judge_resume(first, rest):
    if any(r["num_replicas"] != 3 for r in rest):
        return f"the resume saw {[r['num_replicas'] for r in rest]} ranks, not 3"
    walked = sorted(sum((r["consumed"] for r in first), []) + sum((r["rest"] for r in rest), []))
    if walked != list(range(SIZE)):
        lost = sorted(set(range(SIZE)) - set(walked))
        return f"epoch 2 across the resume: lost {lost}, {len(walked) - SIZE + len(lost)} repeats"
    if len({len(r["rest"]) for r in rest}) != 1:
        return f"uneven shards after the resume: {[len(r['rest']) for r in rest]}"
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("launch", choices=("spawn-tcp", "spawn-env", "harness", "torchrun-standalone",
                                      "torchrun-c10d", "launcher"))
    p.add_argument("out_dir")
    p.add_argument("--expect-source", default="")
    p.add_argument("--launcher", default="")
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in os.listdir(args.out_dir):
        if name.endswith(".json"):
            os.remove(os.path.join(args.out_dir, name))
    for phase, n in (("first", 2), ("resume", 3)):
        cmd = command(args.launch, phase, args.out_dir, n, args.launcher)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=240)
        print(f"$ {shlex.join(cmd)}\n{p.stdout}", flush=True)
        got = records(args.out_dir, phase, n)
        if p.returncode != 0 or got is None:
            print(f"FAIL: {phase} phase: exit {p.returncode}, records {got is not None}")
            return 1
        why = judge_first(got, args.expect_source) if phase == "first" else \
            judge_resume(records(args.out_dir, "first", 2), got)
        if why:
            print(f"FAIL: {args.launch}, {phase} phase: {why}")
            return 1
    print(f"OK: {args.launch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
