"""Run by an image's python3 in each task of a containerized step (containers_test.cpp), with
the wheel's contents mounted and on PYTHONPATH. Prints "<rank> KEY=VALUE" lines (probe.sh's
form, parse_probe):

  node, affinity, job         the task's node, CPU mask and Slurm job id
  source, reasons.source      stoker.plan()'s source and its "source" reasons (' | ' joined)
  workers                     stoker.plan().workers
  plan.STOKER_X               each variable of stoker.plan().to_env(): the plan it returned
  STOKER_X                    the task's own STOKER_* environment (the seal left out)
  OMP_NUM_THREADS             as the task got it ("unset" when not)
  import_s                    seconds `import stoker` took
  batches                     with a token file as the argument: batches a stoker.Loader over
                              it yielded (at most 5: as_numpy, the image has no torch)
"""
import os
import sys
import time

# PROBE_RANK: the task's rank passed by hand where the environment is cleared (bubblewrap's
# --clearenv, as Apptainer's --cleanenv).
rank = os.environ.get("PROBE_RANK") or os.environ.get("SLURM_PROCID", "x")


def say(key, value):
    print(rank, f"{key}={value}", flush=True)


start = time.monotonic()
import stoker  # noqa: E402 (timed)

say("import_s", f"{time.monotonic() - start:.3f}")
plan = stoker.plan()
say("node", os.environ.get("SLURMD_NODENAME", ""))
say("job", os.environ.get("SLURM_JOB_ID", ""))
say("affinity", ",".join(str(c) for c in sorted(os.sched_getaffinity(0))))
say("source", plan.source)
say("reasons.source", " | ".join(text for field, text in plan.reasons if field == "source"))
say("workers", plan.workers)
for name, value in sorted(plan.to_env().items()):
    say("plan." + name, value)
for name, value in sorted(os.environ.items()):
    if name.startswith("STOKER_") and name != "STOKER_PLAN_SEAL":
        say(name, value)
say("OMP_NUM_THREADS", os.environ.get("OMP_NUM_THREADS", "unset"))
if len(sys.argv) > 1:
    batches = 0
    with stoker.Loader.tokens(sys.argv[1], seq_len=64, batch_size=8, as_numpy=True) as loader:
        loader.set_epoch(0)
        for batch in loader:
            windows = batch[0] if isinstance(batch, tuple) else batch
            assert windows.shape == (8, 65), windows.shape  # seq_len + 1 tokens a window
            batches += 1
            if batches == 5:
                break
    say("batches", batches)
