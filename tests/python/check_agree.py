#!/usr/bin/env python3
"""Starts the ranks of agree_job.py for one scenario and judges what they printed. Exit
status 0 when the scenario behaved, 1 with the reason and the ranks' output otherwise.

usage: check_agree.py SCENARIO DATA_FILE --ranks N [--backend gloo|none]
                      [--launcher 'srun -N2 -n{n} --mpi=pmix']
                      [--late SECONDS] [--warn SECONDS] [--min-wait SECONDS]
Without --launcher the N ranks start here, on the loopback (RANK/WORLD_SIZE, MASTER_ADDR
127.0.0.1 and a free port). With it, the launcher starts them ({n}: the number of ranks).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

from testdata import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
# seconds: far above what any scenario needs (the longest pause is 65 s), so load cannot
# fail a test
JOB_LIMIT = 180
# Variables of an outer launcher that would make a local rank join another world.
LAUNCHER_VARS = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "OMPI_COMM_WORLD_SIZE",
                 "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")


def run_local(args, env):
    """The ranks as local processes; returns (exit statuses, combined output, seconds)."""
    port = str(free_port())
    procs = []
    start = time.monotonic()
    for rank in range(args.ranks):
        rank_env = {k: v for k, v in env.items() if k not in LAUNCHER_VARS}
        rank_env.update(RANK=str(rank), WORLD_SIZE=str(args.ranks), LOCAL_RANK=str(rank),
                        LOCAL_WORLD_SIZE=str(args.ranks), MASTER_ADDR="127.0.0.1",
                        MASTER_PORT=port)
        procs.append(subprocess.Popen(job_command(args), env=rank_env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outputs, codes = [], []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=JOB_LIMIT)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out, _ = p.communicate()
            out += "\n[check_agree: killed: over the time limit]"
        outputs.append(out)
        codes.append(p.returncode)
    return codes, "\n".join(outputs), time.monotonic() - start


def run_launcher(args, env):
    command = shlex.split(args.launcher.replace("{n}", str(args.ranks))) + job_command(args)
    start = time.monotonic()
    try:
        p = subprocess.run(command, env=env, text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=JOB_LIMIT)
        return [p.returncode], p.stdout, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode()
        return [124], out + "\n[check_agree: over the time limit]", time.monotonic() - start


def job_command(args):
    return [sys.executable, os.path.join(HERE, "agree_job.py"), args.scenario, args.data,
            "--backend", args.backend]


def lines(output, pattern):
    return [m for m in (re.match(pattern, line) for line in output.splitlines()) if m]


def judge(args, codes, output, seconds):
    """None when the scenario behaved, else the reason."""
    n, ok = args.ranks, all(c == 0 for c in codes)
    done = {int(m[1]) for m in lines(output, r"rank (\d+): epoch 1 done")}
    errors = {int(m[1]): m[2] for m in lines(output, r"rank (\d+): error: (.*)")}
    if args.scenario in ("ok", "late", "eval"):
        if not ok or done != set(range(n)):
            return f"the job failed (exit {codes}) or ranks {sorted(set(range(n)) - done)} " \
                   "did not finish epoch 1"
        if args.expect_mode:
            modes = lines(output, r"rank \d+: agreement (.*) / (.*)$")
            if len(modes) != n or any(m[1] != args.expect_mode or m[2] != args.expect_mode
                                      for m in modes):
                return f"expected agreement '{args.expect_mode}' on every rank"
    if args.scenario == "late":
        note = r"stoker: rank 1: agree_on_epoch: waited (\d+) s at the start of epoch 1 for rank 0 "
        waited = [int(m[1]) for m in lines(output, note)]
        if not waited:
            return "no rank named rank 0 while it was late"
        if max(waited) < args.min_wait:
            return f"rank 1 said it waited {max(waited)} s at most, expected {args.min_wait} s"
    if args.scenario == "eval" and not lines(output, r"rank 0: evaluated \d+ samples"):
        return "rank 0 did not evaluate alone"
    if args.scenario == "seeds":
        for kind in ("sampler", "loader"):
            said = {int(m[1]): m[2] for m in lines(output, rf"rank (\d+): {kind} error: (.*)")}
            if sorted(said) != list(range(n)) or len(set(said.values())) != 1:
                return f"expected every rank's {kind} to fail with one message: {said}"
            if "ranks disagree on the seed: rank 0 has seed 100, rank 1 has seed 101" not in \
                    said[0]:
                return f"the {kind}'s message does not name the ranks and seeds: {said[0]}"
    if args.scenario == "early":
        if ok:
            return "the job succeeded although rank 1 left"
        if args.backend == "gloo" and "not every rank arrived within" not in errors.get(0, ""):
            return f"rank 0 did not give up naming the wait: {errors.get(0)}"
        if args.backend == "gloo" and "missing: rank 1" not in errors.get(0, ""):
            return f"rank 0 did not name rank 1: {errors.get(0)}"
    if seconds > JOB_LIMIT:
        return f"took {seconds:.0f} s"
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=("ok", "seeds", "late", "early", "eval"))
    p.add_argument("data")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--backend", choices=("gloo", "none"), default="gloo")
    p.add_argument("--launcher", help="command that starts the ranks ({n}: how many)")
    p.add_argument("--expect-mode", help="the agreement every rank must report")
    p.add_argument("--min-wait", type=int, default=0,
                   help="late: the longest wait rank 1 reports must reach this many seconds")
    p.add_argument("--late", type=float, default=3.5,
                   help="late: seconds rank 0 pauses before epoch 1 (LATE_SECONDS of the job)")
    p.add_argument("--warn", type=int, default=1,
                   help="the ranks' STOKER_AGREE_WARN: seconds between the waiting notes")
    args = p.parse_args()
    env = dict(os.environ, STOKER_AGREE_WARN=str(args.warn), LATE_SECONDS=str(args.late))
    if args.scenario == "early":
        env["STOKER_AGREE_TIMEOUT"] = "3"
    codes, output, seconds = (run_launcher if args.launcher else run_local)(args, env)
    why = judge(args, codes, output, seconds)
    print(output)
    if why:
        print(f"FAIL [{args.scenario}, {args.ranks} ranks, {args.backend}]: {why}")
        return 1
    print(f"OK [{args.scenario}, {args.ranks} ranks, {args.backend}] in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
