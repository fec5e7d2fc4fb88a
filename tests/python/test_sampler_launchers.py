"""The launcher matrix in the python family (2 ranks on the loopback, then a resume on 3):
mp.spawn with env://, torchrun --standalone and torchrun with a c10d rendezvous on
127.0.0.1 (python3 -m torch.distributed.run). mp.spawn with tcp:// and PyTorch's harness
style are in test_faults_world.py; srun with the plugin is cluster.sampler_world and mpirun
is mpi.sampler_world. world_matrix.py says what each checks."""
import unittest

from test_faults_world import run_matrix


class LauncherMatrix(unittest.TestCase):
    def test_spawn_with_env_init(self):
        run_matrix(self, "spawn-env", "--expect-source", "torch.distributed (gloo)")

    def test_torchrun_standalone(self):
        run_matrix(self, "torchrun-standalone", "--expect-source", "torch.distributed (gloo)")

    def test_torchrun_c10d_rendezvous(self):
        run_matrix(self, "torchrun-c10d", "--expect-source", "torch.distributed (gloo)")


if __name__ == "__main__":
    unittest.main()
