"""The silent double data (docs/reliability.md): under mp.spawn with
init_process_group("gloo", init_method="tcp://...", rank=r, world_size=2) and no launcher
variables, stoker.DistributedSampler and stoker.Loader took each rank for the whole world
(every sample twice per epoch, `agreement` said "single rank", nothing on stderr); under
PyTorch's test harness (WORLD_SIZE set, the rank passed to init_process_group) they stopped
with "RANK: is unset while WORLD_SIZE is set". Both now read the world from the process
group, as torch's class does. world_matrix.py runs the ranks and judges them; the other
launchers are in test_sampler_launchers.py."""
import os
import subprocess
import sys
import unittest

from testdata import free_port, NoLeftovers, TempDir

HERE = os.path.dirname(os.path.abspath(__file__))


def run_matrix(test, launch, *extra):
    tmp = TempDir()
    try:
        p = subprocess.run([sys.executable, os.path.join(HERE, "world_matrix.py"), launch,
                            tmp.path, *extra], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=600)
    finally:
        tmp.cleanup()
    test.assertEqual(p.returncode, 0, p.stdout)
    return p.stdout


class WorldFromTheProcessGroup(NoLeftovers, unittest.TestCase):
    def test_spawn_with_tcp_init_sees_two_ranks(self):
        run_matrix(self, "spawn-tcp", "--expect-source", "torch.distributed (gloo)")

    def test_pytorchs_harness_style_works(self):
        run_matrix(self, "harness", "--expect-source", "torch.distributed (gloo)")

    def test_the_group_wins_over_a_disagreeing_environment_and_says_so(self):
        code = ("import os, torch.distributed as dist, stoker\n"
                "dist.init_process_group('gloo', init_method='tcp://127.0.0.1:' + "
                "os.environ['PORT'], rank=0, world_size=1)\n"
                "s = stoker.DistributedSampler(range(10))\n"
                "print(s.num_replicas, s.rank, s.world_source)\n")
        env = dict(os.environ, RANK="1", WORLD_SIZE="4", STOKER_VERBOSE="1",
                   PORT=str(free_port()))
        p = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "1 0 torch.distributed (gloo) process group")
        self.assertIn("torch.distributed's process group says rank 0 of 1, the environment "
                      "says rank 1 of 4 (RANK/WORLD_SIZE): the process group wins", p.stderr)
        self.assertIn("DistributedSampler: rank 0 of 1 from torch.distributed (gloo) process "
                      "group", p.stderr)


if __name__ == "__main__":
    unittest.main()
