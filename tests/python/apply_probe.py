"""Applies this process's stoker plan as the arguments say, then prints, as one JSON line,
where its threads run (read back from the kernel) and what torch was left with. Run in a
fresh process by test_apply_plan.py (pinning and torch's thread count are per process),
and on the local cluster by cluster.Task.MainAndWorkerThreadsLandOnThePlansCores.

    apply_probe.py TOKENS_FILE [--torch-first] [--no-torch] [--set-threads N]
                   [--apply yes|no|default] [--loader-plans] [--omp-threads N] [--again N]
"""
import argparse
import json
import os
import sys
import threading
import warnings


def cpu_text(cpus):
    """[0, 1, 2, 5] -> "0-2,5", as /proc prints CPU lists."""
    out, run = [], []
    for c in sorted(cpus) + [None]:
        if run and c is not None and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [c]
    return ",".join(out)


def thread_cpus(tid):
    with open(f"/proc/self/task/{tid}/status") as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":", 1)[1].strip()
    return None


def thread_name(tid):
    with open(f"/proc/self/task/{tid}/comm") as f:
        return f.read().strip()


def mem_policy():
    """The main thread's memory policy (get_mempolicy): {"mode": MPOL_*, "nodes": [...]}."""
    import ctypes
    import platform

    number = {"x86_64": 239, "aarch64": 236}.get(platform.machine())  # SYS_get_mempolicy
    if number is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    mode, mask = ctypes.c_int(0), (ctypes.c_ulong * 16)()
    if libc.syscall(ctypes.c_long(number), ctypes.byref(mode), mask, ctypes.c_ulong(1025),
                    ctypes.c_void_p(None), ctypes.c_ulong(0)) != 0:
        return None
    nodes = [n for n in range(1024) if mask[n // 64] >> (n % 64) & 1]
    return {"mode": mode.value, "nodes": nodes}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokens", help="a uint16 token file for a stoker.Loader.tokens")
    ap.add_argument("--torch-first", action="store_true", help="import torch before stoker")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--set-threads", type=int, help="torch.set_num_threads(N) before the plan")
    ap.add_argument("--apply", choices=("yes", "no", "default"), default="default")
    ap.add_argument("--omp-threads", type=int,
                    help="after the plan, torch.set_num_threads(N): OpenMP threads started "
                         "after the pin (a plan with one main CPU starts none)")
    ap.add_argument("--again", type=int,
                    help="then torch.set_num_threads(N) and stoker.plan() once more")
    ap.add_argument("--loader-plans", action="store_true",
                    help="no stoker.plan(): the Loader plans (plan=None)")
    a = ap.parse_args()
    torch = None
    if a.torch_first:
        import torch
    import stoker
    if not a.no_torch and torch is None:
        import torch
    if a.set_threads:
        torch.set_num_threads(a.set_threads)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if a.loader_plans:
            loader = stoker.Loader.tokens(a.tokens, seq_len=16, batch_size=4, as_numpy=True)
            plan = loader.plan
        else:
            apply = {"yes": True, "no": False, "default": None}[a.apply]
            plan = stoker.plan(apply=apply)
            loader = stoker.Loader.tokens(a.tokens, seq_len=16, batch_size=4, plan=plan,
                                          as_numpy=True)
        if a.again:
            torch.set_num_threads(a.again)
            plan = stoker.plan(apply=apply)
    main_tid = threading.get_native_id()
    torch_threads = torch.get_num_threads() if torch is not None else None
    if a.omp_threads:
        torch.set_num_threads(a.omp_threads)
    if torch is not None:  # an intra-op parallel region: torch's OpenMP pool, if any, starts
        torch.ones(1 << 20).mul(2).sum()
    tids = [int(t) for t in os.listdir("/proc/self/task")]
    names = {t: thread_name(t) for t in tids}
    out = {
        "main_thread": thread_cpus(main_tid),
        "sched_getaffinity": sorted(os.sched_getaffinity(0)),
        "main_cpus": plan.main_cpu_list,
        "worker_shares": sorted(cpu_text(s) for s in plan.worker_shares()),
        "workers": sorted(thread_cpus(t) for t in tids if names[t].startswith("stoker-w")),
        # Threads besides the main one and stoker's: torch's OpenMP pool (and Python's own).
        "other_threads": sorted(thread_cpus(t) for t in tids
                                if t != main_tid and not names[t].startswith("stoker-")),
        "torch_threads": torch_threads,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "mem_policy": mem_policy(),
        "numa": plan.numa,
        "reasons": {f: t for f, t in plan.reasons if f in ("main_thread", "torch_threads")},
        "warnings": [str(w.message) for w in caught if "stoker" in str(w.message)],
        "source": plan.source,
    }
    for _ in loader:
        pass
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    sys.exit(main())
