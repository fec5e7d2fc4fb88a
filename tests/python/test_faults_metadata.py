"""The syscall budget of opening an image folder, counted in the real processes with strace
(a per-file stat is what froze Lustre's metadata servers when 512 ranks opened ImageNet):

- one process: no open (first, cached, or without a cache) stats an image file. The walk
  reads names (getdents: one opened folder each); a re-open stats each folder once. The
  opens of image files are the content sample's (at most 1024 whatever the dataset's size)
  and the loader's first batches.
- a job of 2 ranks, over torch.distributed and over MPI: rank 0 lists; rank 1 stats no
  image file, opens no folder of the dataset (so reads none), and opens only the images its
  loader reads (none of the content sample), and both have the fingerprint and size a
  process listing alone finds.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import unittest

from testdata import free_port, TempDirCase

HERE = os.path.dirname(os.path.abspath(__file__))
CLASSES, PER_CLASS = 20, 60  # 1,200 files: more than the 1,024 the content sample reads
SAMPLED = 1024
LOADER_READS = 64  # far above what the smallest ring reads before close (2 batches of 8)
JOB = os.path.join(HERE, "listing_job.py")
LAUNCHER_VARS = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "OMPI_COMM_WORLD_SIZE",
                 "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK")


def strace_works():
    if shutil.which("strace") is None:
        return "strace is not installed (scripts/install-deps.sh installs it)"
    got = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "true"], capture_output=True,
                         text=True)
    return None if got.returncode == 0 else f"strace cannot trace here: {got.stderr.strip()}"


def traced(trace):
    """strace's words for a command whose calls go to `trace`."""
    return ["strace", "-f", "-qq", "-e", "trace=stat,lstat,newfstatat,statx,openat", "-o", trace]


class MetadataBudget(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = strace_works()
        if why:
            raise unittest.SkipTest(why)
        super().setUpClass()  # makes cls.tmp
        cls.root = os.path.join(cls.tmp.path, "data")
        for c in range(CLASSES):
            folder = os.path.join(cls.root, f"class{c:02d}")
            os.makedirs(folder)
            for i in range(PER_CLASS):
                with open(os.path.join(folder, f"{i:03d}.jpg"), "wb") as f:
                    f.write(bytes([c, i]) * 2500)
        # Folders an hour old: a listing of folders changed in the last seconds is not kept.
        past = os.path.getmtime(cls.root) - 3600
        for folder, _, _ in os.walk(cls.root):
            os.utime(folder, (past, past))
        cls.folders = CLASSES + 1
        cls.alone = cls.run_alone("none", "alone.trace")

    @classmethod
    def env(cls, cache):
        env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS}
        return dict(env, STOKER_CACHE_DIR=cache)

    @classmethod
    def run_alone(cls, cache, name):
        """One process opening the folder: (its calls, its line)."""
        trace = os.path.join(cls.tmp.path, name)
        got = subprocess.run(traced(trace) + [sys.executable, JOB, cls.root, "none"],
                             env=cls.env(cache), capture_output=True, text=True, timeout=120)
        assert got.returncode == 0, got.stdout + got.stderr
        return cls.calls(trace), got.stdout.strip()

    @classmethod
    def calls(cls, trace):
        """The calls on paths under the dataset's root: [(syscall, path)]."""
        calls = []
        with open(trace) as f:
            for line in f:
                at = line.find(cls.root)
                if at < 0:
                    continue
                name = line.split()[1].split("(")[0]
                calls.append((name, line[at:line.index('"', at)]))
        return calls

    @staticmethod
    def count(calls, what):
        image = lambda path: path.endswith(".jpg")  # noqa: E731
        tests = {"image stats": lambda n, p: "stat" in n and image(p),
                 "folder stats": lambda n, p: "stat" in n and not image(p),
                 "image opens": lambda n, p: n == "openat" and image(p),
                 "folder opens": lambda n, p: n == "openat" and not image(p)}
        return sum(1 for name, path in calls if tests[what](name, path))

    def test_no_open_stats_an_image_file(self):
        cache = os.path.join(self.tmp.path, "cache")
        first, _ = self.run_alone(cache, "first.trace")
        again, _ = self.run_alone(cache, "again.trace")
        walked, _ = self.alone
        for name, calls in (("first", first), ("cached", again), ("uncached", walked)):
            self.assertEqual(self.count(calls, "image stats"), 0, f"{name}: a per-file stat")
            self.assertGreaterEqual(self.count(calls, "image opens"), SAMPLED, name)
            self.assertLessEqual(self.count(calls, "image opens"), SAMPLED + LOADER_READS, name)
        # The walk opens each folder to read it; the cached re-open opens none.
        self.assertGreaterEqual(self.count(first, "folder opens"), self.folders)
        self.assertEqual(self.count(again, "folder opens"), 0)
        self.assertLessEqual(self.count(again, "folder stats"), 2 * self.folders)
        print(f"\nopen of {CLASSES * PER_CLASS} files in {self.folders} folders: walk "
              f"{self.count(first, 'folder opens')} folder opens, "
              f"{self.count(first, 'folder stats')} folder stats; re-open "
              f"{self.count(again, 'folder stats')} folder stats; image stats 0",
              file=sys.stderr)

    def judge_job(self, traces, lines):
        """Rank 0 listed; rank 1 took its index; both found what a lone process finds."""
        _, alone_line = self.alone
        expected = alone_line.split(" ", 2)[2]  # "size N fingerprint 0xF"
        self.assertEqual(sorted(re.sub(r"^rank \d+ ", "", l) for l in lines),
                         [expected, expected], lines)
        listed, took = (self.calls(t) for t in traces)
        self.assertGreaterEqual(self.count(listed, "folder opens"), self.folders)
        self.assertGreaterEqual(self.count(listed, "image opens"), SAMPLED)
        self.assertEqual(self.count(took, "image stats"), 0, "rank 1 stat'ed an image")
        self.assertEqual(self.count(took, "folder opens"), 0, "rank 1 read a folder")
        self.assertLessEqual(self.count(took, "folder stats"), 2, "rank 1 stat'ed folders")
        self.assertLessEqual(self.count(took, "image opens"), LOADER_READS,
                             "rank 1 read the content sample")

    def run_gloo(self, roots):
        """Rank r of len(roots) opens roots[r] under torch.distributed (gloo), traced:
        (exit statuses, outputs, trace files)."""
        port, procs, traces = str(free_port()), [], []
        for rank, root in enumerate(roots):
            traces.append(os.path.join(self.tmp.path, f"gloo.{rank}.trace"))
            env = dict(self.env("none"), RANK=str(rank), WORLD_SIZE=str(len(roots)),
                       LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(len(roots)),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            procs.append(subprocess.Popen(traced(traces[-1]) + [sys.executable, JOB, root, "gloo"],
                                          env=env, text=True, stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT))
        outs = [p.communicate(timeout=240)[0] for p in procs]
        return [p.returncode for p in procs], outs, traces

    def test_over_torch_distributed_rank_0_lists_for_the_job(self):
        codes, outs, traces = self.run_gloo([self.root, self.root])
        self.assertEqual(codes, [0, 0], outs)
        self.judge_job(traces, [o.strip().splitlines()[-1] for o in outs])

    def test_a_folder_rank_0_cannot_list_is_its_error_on_every_rank(self):
        empty = os.path.join(self.tmp.path, "empty")
        os.makedirs(empty, exist_ok=True)
        codes, outs, _ = self.run_gloo([empty, empty])
        self.assertNotIn(0, codes, outs)
        self.assertIn("holds no class subfolders", outs[0])
        self.assertIn(f"{empty}: rank 0 could not list it: {empty}: holds no class subfolders",
                      outs[1])

    def test_a_rank_given_another_root_lists_its_own_and_says_so(self):
        codes, outs, _ = self.run_gloo([self.root, self.root + "/"])
        self.assertEqual(codes, [0, 0], outs)
        self.assertNotIn("cannot take", outs[1], "data/ and data are one folder")
        shutil.copytree(self.root, self.root + "-copy", dirs_exist_ok=True)
        codes, outs, _ = self.run_gloo([self.root, self.root + "-copy"])
        self.assertEqual(codes, [0, 0], outs)
        self.assertIn("stoker: rank 1: cannot take rank 0's listing of the image folder (it "
                      f"lists another root than {self.root}-copy", outs[1])
        _, alone_line = self.alone
        self.assertIn(alone_line.split(" ", 2)[2], outs[1], "rank 1 listed its copy itself")

    def test_over_mpi_rank_0_lists_for_the_job(self):
        launcher = os.environ.get("STOKER_TEST_MPIRUN")
        if not launcher:
            self.skipTest("built without MPI (STOKER_TEST_MPIRUN is not set)")
        prefix = os.path.join(self.tmp.path, "mpi")
        # Each rank traced into its own file, named by its MPI rank.
        rank_cmd = (shlex.join(traced("TRACE") + [sys.executable, JOB, self.root, "none"])
                    .replace("TRACE", f"{prefix}.$OMPI_COMM_WORLD_RANK.trace"))
        argv = shlex.split(launcher.replace("{n}", "2")) + ["sh", "-c", rank_cmd]
        got = subprocess.run(argv, env=self.env("none"), capture_output=True, text=True,
                             timeout=240)
        self.assertEqual(got.returncode, 0, got.stdout + got.stderr)
        lines = [l for l in got.stdout.splitlines() if l.startswith("rank ")]
        self.judge_job([f"{prefix}.{r}.trace" for r in range(2)], lines)


if __name__ == "__main__":
    unittest.main()
