"""Node-local copies of a dataset that differ, under the shared listing over torch.distributed
(the MPI path is cluster.faults_runtime_node_copy). A job stages its image folder to each
node's local disk; one node's copy is stale. Rank 0's listing and fingerprint alone would let
the job run on that node's files with rank 0's labels. Each node's first rank checks its own
copy against rank 0's content sample, and every rank stops with the problem: the node and the
file, within seconds. Two ranks here, rank 1 as node "n2" in a mount namespace of its own
where the folder's path holds the other copy (root only: mount needs it)."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

from testdata import TempDirCase, free_port, make_image_folder

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "store_limit_job.py")


def namespaces_work():
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare (util-linux) for a mount namespace"
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return None if r.returncode == 0 else f"unshare -m fails here: {r.stderr.strip()}"


class NodeCopies(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = namespaces_work()
        if why:
            raise unittest.SkipTest(why)
        super().setUpClass()
        cls.root = os.path.join(cls.tmp.path, "staged")
        make_image_folder(cls.root, classes=2, per_class=4)
        cls.other = os.path.join(cls.tmp.path, "n2-copy")
        shutil.copytree(cls.root, cls.other)
        cls.changed = sorted(os.listdir(os.path.join(cls.other, "c1")))[2]
        with open(os.path.join(cls.other, "c1", cls.changed), "r+b") as f:
            f.seek(100)
            f.write(b"\xaa\x55" * 8)  # same size, other bytes: a stale or damaged copy

    def two_nodes(self, rank1_root):
        port = free_port()
        env = dict(os.environ, STOKER_AGREE_TIMEOUT="60", STOKER_AGREE_WARN="10")
        job = [sys.executable, JOB, self.root, str(port)]
        rank0 = subprocess.Popen([*job, "0", "0", "0"], env=dict(env, SLURMD_NODENAME="n1"),
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        inner = (f"mount --bind {rank1_root} {self.root} && exec " +
                 " ".join([*job, "1", "0", "0"]))
        rank1 = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", inner],
                                 env=dict(env, SLURMD_NODENAME="n2"), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        start, out = time.monotonic(), []
        for p in (rank0, rank1):
            stdout, stderr = p.communicate(timeout=120)
            lines = [line for line in stdout.splitlines() if line.startswith("{")]
            out.append(json.loads(lines[-1]) if lines else {"error": stderr[-2000:]})
        return out, time.monotonic() - start

    def test_a_node_whose_copy_differs_stops_every_rank_naming_it_and_the_file(self):
        ranks, seconds = self.two_nodes(self.other)
        for r in ranks:
            self.assertIn("error", r, ranks)
            self.assertIn("n2", r["error"], ranks)
            self.assertIn(self.changed, r["error"], ranks)
        self.assertLess(seconds, 40, ranks)  # none waited for the agreement's timeout

    def test_the_same_copy_on_each_node_passes(self):
        ranks, _ = self.two_nodes(self.root)
        self.assertEqual([r.get("size") for r in ranks], [8, 8], ranks)


if __name__ == "__main__":
    unittest.main()
