"""The user guide's worked example (docs/user-guide.md, "torchvision's reference script"):
torchvision's own references/classification/train.py, from Debian's source package of the
installed torchvision (scripts/torchvision-references.sh, run by scripts/install-deps.sh),
changed by each of the guide's two diffs (the plan and the sampler; stoker's loaders), run
with the ResNet-50 recipe's flags as one process and as 2 ranks under torchrun with gloo.

The diffs are read from the guide itself, so the guide's text is what applies and runs, and
each changes at most 5 lines of the script. The CPU mend (below) is this machine's, not the
user's: torchvision's scripts assume CUDA for the process group and the model."""
import os
import re
import shutil
import subprocess
import sys
import unittest

from testdata import TempDirCase, make_image_folder, reference_folder

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GUIDE = os.path.join(ROOT, "docs", "user-guide.md")

# The recipe of torchvision's current ResNet-50 weights, at a size this machine trains fast.
RECIPE = ["--auto-augment", "ta_wide", "--random-erase", "0.1", "--mixup-alpha", "0.2",
          "--cutmix-alpha", "1.0", "--label-smoothing", "0.1", "--ra-sampler", "--ra-reps", "4",
          "--train-crop-size", "32", "--val-resize-size", "36", "--val-crop-size", "32"]
# The scripts assume a GPU per rank: on this CPU machine the process group is gloo's, the
# reductions' tensors live on the CPU, and DistributedDataParallel takes no device.
CPU_MEND = [("utils.py", "    torch.cuda.set_device(args.gpu)\n", ""),
            ("utils.py", 'args.dist_backend = "nccl"', 'args.dist_backend = "gloo"'),
            ("utils.py", 'device="cuda"', 'device="cpu"'),
            ("train.py", "DistributedDataParallel(model, device_ids=[args.gpu])",
             "DistributedDataParallel(model)")]


def guide_diff(name):
    """The ```diff block after the guide's <!-- reference-script: NAME --> marker."""
    text = open(GUIDE, encoding="utf-8").read()
    found = re.search(r"<!-- reference-script: %s -->\s*```diff\n(.*?)```" % re.escape(name),
                      text, re.S)
    if not found:
        raise AssertionError(f"docs/user-guide.md has no diff marked reference-script: {name}")
    return found.group(1)


def changed_lines(diff):
    body = [line for line in diff.splitlines()
            if not line.startswith(("---", "+++", "@@"))]
    added = [line for line in body if line.startswith("+")]
    removed = [line for line in body if line.startswith("-")]
    return added, removed


class ReferenceScript(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.references = reference_folder()
        if not os.path.isfile(os.path.join(cls.references, "train.py")):
            raise AssertionError(f"torchvision's reference scripts are not in {cls.references}: "
                                 "run scripts/install-deps.sh (it fetches them)")
        cls.data = os.path.join(cls.tmp.path, "data")
        # RASampler takes whole multiples of 256 samples: 8 classes x 32 (top-5 needs 5+).
        make_image_folder(os.path.join(cls.data, "train"), classes=8, per_class=32, seed=1)
        make_image_folder(os.path.join(cls.data, "val"), classes=8, per_class=3, seed=2)

    def script(self, way):
        folder = os.path.join(self.tmp.path, way)
        shutil.copytree(self.references, folder)
        diff = guide_diff(way)
        done = subprocess.run(["patch", "-p1", "--no-backup-if-mismatch", "-d", folder],
                              input=diff, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, f"the guide's {way} diff does not apply to "
                         f"torchvision's train.py:\n{done.stdout}{done.stderr}")
        for name, old, new in CPU_MEND:
            with open(os.path.join(folder, name)) as f:
                text = f.read()
            self.assertIn(old, text, f"torchvision's {name} changed: mend it anew")
            with open(os.path.join(folder, name), "w") as f:
                f.write(text.replace(old, new))
        return folder

    def train(self, folder, data, ranks):
        env = dict(os.environ, STOKER_VERBOSE="1", OMP_NUM_THREADS="1")
        args = ["train.py", "--data-path", data, "--model", "resnet18", "--device", "cpu",
                "--epochs", "1", "-b", "16", "-j", "1", "--print-freq", "4",
                "--output-dir", os.path.join(folder, "out")] + RECIPE
        if ranks > 1:
            args = [os.path.join(HERE, "torchrun.py"), "--standalone",
                    f"--nproc_per_node={ranks}"] + args
        done = subprocess.run([sys.executable] + args, cwd=folder, env=env, capture_output=True,
                              text=True, timeout=600)
        out = done.stdout + done.stderr
        self.assertEqual(done.returncode, 0, f"train.py failed ({ranks} rank(s)):\n{out[-6000:]}")
        self.assertRegex(out, r"Acc@1 [\d.]+ Acc@5 [\d.]+", "no evaluation ran")
        self.assertTrue(os.path.exists(os.path.join(folder, "out", "checkpoint.pth")))
        return out

    def check_way(self, way, used):
        added, removed = changed_lines(guide_diff(way))
        self.assertLessEqual(max(len(added), len(removed)), 5, f"the {way} diff changes more "
                             f"than 5 lines:\n" + "\n".join(added + removed))
        folder = self.script(way)
        for ranks in (1, 2):
            out = self.train(folder, self.data, ranks)
            for what in used(ranks):
                self.assertIn(what, out, f"{way}, {ranks} rank(s): stoker did not say {what!r}")
            shutil.rmtree(os.path.join(folder, "out"))

    def test_the_plan_and_the_sampler(self):
        # -j 1 against the plan's workers, pin_memory=True without a GPU: each named once per
        # rank; with 2 ranks the sampler takes its world from the process group.
        self.check_way("plan", lambda ranks: ["pin_memory=True"] + (
            ["torch.distributed"] if ranks > 1 else []))

    def test_stokers_loaders(self):
        # The training loader's epoch is RASampler's: 256 // 256 * 256 / ranks samples, each
        # of 64 images 4 times; the evaluation loader's is its share of the 24 images.
        self.check_way("loaders", lambda ranks: [
            f"{16 // ranks} batches, {256 // ranks} samples",
            f"{3 - ranks} batches, {24 // ranks} samples"]  # 16 + 8, or 12
            + (["Loader: rank 1 of 2 from torch.distributed"] if ranks > 1 else []))


if __name__ == "__main__":
    unittest.main()
