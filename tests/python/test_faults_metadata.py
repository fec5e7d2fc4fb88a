"""Issue 36's syscall budget: a re-open of an unchanged image folder asks the filesystem's
metadata server once per folder, never once per file. Counted in the real process with
strace (a per-file stat is what froze Lustre's metadata servers when 512 ranks opened
ImageNet): the first open walks the tree (one stat per image, for its size) and keeps the
listing in STOKER_CACHE_DIR; the second reads it back, checking each folder's time.

Budget of the re-open: 0 stat-family calls on image files; at most 2 per folder (the
root's path check, each folder's time). A per-file stat coming back fails the test. The
opens of image files are printed, not counted against it: the content sample's (at most
1024 files, whatever the dataset's size) and the loader's first batches, as many as timing
lets it read before close().
"""
import os
import shutil
import subprocess
import sys
import unittest

from testdata import TempDir

CLASSES, PER_CLASS = 20, 60  # 1,200 files of 5,000 bytes: more than the 4 MiB sampled whole
PROBE = "import stoker, sys; stoker.Loader.images(sys.argv[1], batch_size=8).close()"


def strace_works():
    if shutil.which("strace") is None:
        return "strace is not installed (scripts/install-deps.sh installs it)"
    got = subprocess.run(["strace", "-f", "-qq", "-o", os.devnull, "true"], capture_output=True,
                         text=True)
    return None if got.returncode == 0 else f"strace cannot trace here: {got.stderr.strip()}"


class MetadataBudget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = strace_works()
        if why:
            raise unittest.SkipTest(why)
        cls.tmp = TempDir()
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

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def traced_open(self, cache, name):
        """The calls of one open of the folder whose path is in it: [(syscall, path)]."""
        trace = os.path.join(self.tmp.path, name)
        env = dict(os.environ, STOKER_CACHE_DIR=cache)
        got = subprocess.run(["strace", "-f", "-qq", "-e", "trace=%%stat,openat", "-o", trace,
                              sys.executable, "-c", PROBE, self.root], env=env,
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(got.returncode, 0, got.stderr)
        calls = []
        with open(trace) as f:
            for line in f:
                at = line.find(self.root)
                if at < 0:
                    continue
                name = line.split()[1].split("(")[0]
                path = line[at:line.index('"', at)]
                calls.append((name, path))
        return calls

    def count(self, calls, syscall_kind, files):
        return sum(1 for name, path in calls
                   if (("stat" in name) if syscall_kind == "stat" else name == syscall_kind)
                   and path.endswith(".jpg") == files)

    def test_a_reopen_stats_each_folder_not_each_file(self):
        cache = os.path.join(self.tmp.path, "cache")
        first = self.traced_open(cache, "first.trace")
        files = CLASSES * PER_CLASS
        # The measure sees what it must: the walk's stat of every image.
        self.assertGreaterEqual(self.count(first, "stat", True), files)
        again = self.traced_open(cache, "again.trace")
        self.assertEqual(self.count(again, "stat", True), 0, "a per-file stat came back")
        self.assertLessEqual(self.count(again, "stat", False), 2 * self.folders)
        print(f"\nopen of {files} files in {self.folders} folders: first "
              f"{self.count(first, 'stat', True)} file stats, re-open "
              f"{self.count(again, 'stat', False)} folder stats, "
              f"{self.count(again, 'openat', True)} file opens", file=sys.stderr)

    def test_without_the_cache_every_open_walks(self):
        walked = self.traced_open("none", "none.trace")
        self.assertGreaterEqual(self.count(walked, "stat", True), CLASSES * PER_CLASS)


if __name__ == "__main__":
    unittest.main()
