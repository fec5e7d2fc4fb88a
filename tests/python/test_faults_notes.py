"""The lost notes (docs/reliability.md): training scripts replace builtins.print so that only
rank 0 prints (torchvision's reference scripts do), and stoker wrote its notes with
print(..., file=sys.stderr), so every rank above 0 lost them, the "waited N s for rank 0" note
among them. Notes now go to sys.stderr itself (_notes.py). notes_job.py is such a script, run as
2 ranks over gloo with rank 0 late at an epoch start."""
import ast
import glob
import os
import subprocess
import sys
import threading
import unittest

import stoker
from testdata import free_port, NoLeftovers, TempDir

HERE = os.path.dirname(os.path.abspath(__file__))
WAITED = "stoker: rank 1: agree_on_epoch: waited "


class NotesUnderAReplacedPrint(NoLeftovers, unittest.TestCase):
    def test_rank_1_says_it_waits_for_rank_0(self):
        tmp = TempDir()
        self.addCleanup(tmp.cleanup)
        release = os.path.join(tmp.path, "release")
        port = str(free_port())
        ranks, outputs = [], []
        for rank in range(2):
            env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                       LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
                       STOKER_AGREE_WARN="1", STOKER_VERBOSE="1")
            out = open(os.path.join(tmp.path, f"rank{rank}.out"), "w+")
            self.addCleanup(out.close)
            outputs.append(out)
            # Rank 1's stderr comes through a pipe, read here line by line as it comes.
            ranks.append(subprocess.Popen(
                [sys.executable, os.path.join(HERE, "notes_job.py"), release], env=env,
                stdout=out, stderr=subprocess.PIPE if rank == 1 else subprocess.STDOUT,
                text=True))
        said = []

        def read_rank_1():
            for line in ranks[1].stderr:
                said.append(line)
                if line.startswith(WAITED):
                    open(release, "w").close()  # rank 0 may go on

        reader = threading.Thread(target=read_rank_1)
        reader.start()
        codes = [p.wait(timeout=240) for p in ranks]
        reader.join()
        ranks[1].stderr.close()
        stderr = "".join(said)
        for out in outputs:
            out.seek(0)
        report = f"rank 1's stderr:\n{stderr}\nrank 0:\n{outputs[0].read()}"
        self.assertEqual(codes, [0, 0], report)
        self.assertTrue(any(line.startswith(WAITED) and "for rank 0" in line for line in said),
                        report)
        # The STOKER_VERBOSE line of rank 1 (_world.py) reaches stderr as well.
        self.assertIn("stoker: rank 1: DistributedSampler: rank 1 of 2 from torch.distributed",
                      stderr)


class NoPrintInThePackage(unittest.TestCase):
    def test_no_module_of_the_package_calls_print(self):
        """A note through print() is lost under a replaced print: notes use _notes.note."""
        calls = []
        for path in sorted(glob.glob(os.path.join(os.path.dirname(stoker.__file__), "*.py"))):
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            calls += [f"{os.path.basename(path)}:{node.lineno}" for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                      and node.func.id == "print"]
        self.assertEqual(calls, [])


if __name__ == "__main__":
    unittest.main()
