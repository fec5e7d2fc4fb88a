#!/usr/bin/env python3
"""One rank of the store-limit checks (test_faults_store_limit.py starts two): opens
stoker.Loader.images(ROOT) over torch.distributed (gloo, tcp://127.0.0.1:PORT), its image
folder listed once for the job through the group's store, and prints one JSON line:
{"rank", "size" or "error", "seconds"}.

usage: store_limit_job.py ROOT PORT RANK LIMIT PIECE
  LIMIT  0: the real store as it is; else the store refuses a value over LIMIT bytes and
         closes the connection, as PyPI torch's libuv server does over 8 MiB (Debian's
         torch has no such server, so the rule is enforced here)
  PIECE  0: stoker's own piece size; else the piece size to use (scaled with LIMIT)
"""
import datetime
import json
import sys
import time

import torch.distributed as dist

import stoker
import stoker._listing_share as listing_share


class LimitedStore:
    """A store that refuses a value over `limit` bytes, then fails every call: its
    connection is closed, as the libuv TCPStore server closes a client's."""

    def __init__(self, store, limit):
        self.store, self.limit, self.closed = store, limit, False

    def set(self, key, value):
        self._check()
        if len(value) > self.limit:
            self.closed = True
            raise RuntimeError(f"Connection reset by peer (the server refused {len(value)} "
                               f"bytes for {key}: over its {self.limit})")
        return self.store.set(key, value)

    def _check(self):
        if self.closed:
            raise RuntimeError("Connection closed by peer")

    def __getattr__(self, name):
        def forward(*args):
            self._check()
            return getattr(self.store, name)(*args)
        return forward


root, port, rank, limit, piece = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=60))
if limit:
    limited = LimitedStore(dist.distributed_c10d._get_default_store(), limit)
    dist.distributed_c10d._get_default_store = lambda: limited
if piece:
    listing_share.PIECE = piece
start = time.monotonic()
out = {"rank": rank}
try:
    loader = stoker.Loader.images(root, batch_size=2, size=8, workers=1, prefetch=1,
                                  max_depth=1, held_batches=1, adaptive=False)
    out["size"] = loader.dataset_size
    loader.close()
except Exception as e:  # noqa: BLE001 (the test judges what it was)
    out["error"] = f"{type(e).__name__}: {e}"
out["seconds"] = round(time.monotonic() - start, 2)
print(json.dumps(out), flush=True)
