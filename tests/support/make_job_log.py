#!/usr/bin/env python3
"""Writes a job log as the plugin writes it (record/run_record.hpp): LINES lines, 8 ranks per
job step, a 48-point timeline each (~1.5 KB a line), users and partitions in turn, waits
from a seeded random draw; job 1000's ranks wait most (50-60 %), with the ring at
prefetch_max, so it leads any report.

    make_job_log.py PATH LINES
"""
import json
import random
import sys


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    random.seed(1)
    users, parts = ["alice", "bob", "carol", "dave"], ["gpu", "debug", "a100"]
    with open(path, "w") as out:
        for i in range(n):
            job, rank = 1000 + i // 8, i % 8
            wait = 0.5 + random.random() * 0.1 if job == 1000 else random.random() * 0.45
            record = {
                "v": 1, "job": str(job), "step": "0", "node": "n%d" % (1 + rank // 4),
                "rank": rank, "profile": "cv", "local_rank": rank % 4,
                "cpus": "%d" % (rank % 2), "main_cpus": "%d" % (rank % 2),
                "worker_cpus": "%d" % (rank % 2), "numa": "0", "gpu": "", "cores": 1,
                "workers": 1, "prefetch": 4, "prefetch_max": 8, "pin": False,
                "mem_budget": 1 << 30, "slot_bytes": 1 << 24, "budget_depth": 62,
                "prefetch_max_reason": "room to grow: 2 x prefetch 4, at least 8 = 8, "
                                       "lowered to MaxPrefetch=8",
                "samples": 384000, "batches": 12000, "seconds": 600.5, "samples_per_s": 639.4,
                "wait_share": wait, "depth_reached": 8,
                "at_max_share": 0.7 if job == 1000 else random.random() * 0.2,
                "skipped": 0, "stream_bytes": 0, "end": "close",
                "timeline": [[12.5 * (k + 1), round(min(1.0, wait * (0.5 + k / 48)), 6),
                              4 + k % 5] for k in range(48)]}
            line = {"time": "2026-12-02T10:00:00Z", "job": str(job), "step": "0",
                    "node": record["node"], "user": users[job % 4], "partition": parts[job % 3],
                    "rank": rank, "status": "ok", "record": record}
            out.write(json.dumps(line, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
