"""The epoch agreement over torch.distributed (gloo, 2-4 processes on the loopback): ranks
that agree run; ranks given different seeds fail at the first epoch, every one with the same
message; a late rank 0 is waited for and named; a rank that leaves ends the job within
STOKER_AGREE_TIMEOUT; a loader one rank uses alone enters no collective. check_agree.py
starts the ranks (agree_job.py) and judges them; the cluster suite runs it under srun."""
import os
import subprocess
import sys
import unittest

from testdata import TempDir, TempDirCase

HERE = os.path.dirname(os.path.abspath(__file__))


class AgreementOverTorchDistributed(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.data = os.path.join(cls.tmp.path, "tokens.bin")

    def check(self, scenario, ranks, *extra):
        p = subprocess.run([sys.executable, os.path.join(HERE, "check_agree.py"), scenario,
                            self.data, "--ranks", str(ranks), "--backend", "gloo", *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout)

    def test_four_ranks_that_agree_run(self):
        self.check("ok", 4, "--expect-mode", "torch.distributed (gloo)")

    def test_different_seeds_fail_the_first_epoch_on_every_rank_alike(self):
        self.check("seeds", 3)

    def test_a_late_rank_is_waited_for_and_named(self):
        self.check("late", 2)

    def test_a_rank_that_leaves_ends_the_job_within_the_timeout(self):
        self.check("early", 2)

    def test_a_loader_of_one_rank_enters_no_collective(self):
        self.check("eval", 2, "--expect-mode", "torch.distributed (gloo)")


class WithoutAGroup(unittest.TestCase):
    def test_two_ranks_without_mpi_or_torch_distributed_are_said_unchecked(self):
        tmp = TempDir()
        try:
            data = os.path.join(tmp.path, "tokens.bin")
            p = subprocess.run([sys.executable, os.path.join(HERE, "check_agree.py"), "ok",
                                data, "--ranks", "2", "--backend", "none"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=300)
        finally:
            tmp.cleanup()
        self.assertEqual(p.returncode, 0, p.stdout)
        unchecked = "not checked: no MPI world and no torch.distributed process group"
        self.assertEqual(p.stdout.count(f"agreement {unchecked} / {unchecked}"), 2, p.stdout)
        # Said once per process on stderr, however many loaders and samplers.
        self.assertEqual(p.stdout.count("nothing checks that the ranks agree"), 2, p.stdout)


if __name__ == "__main__":
    unittest.main()
