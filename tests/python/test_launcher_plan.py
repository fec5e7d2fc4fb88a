"""stoker.plan() in a worker that a launcher (torchrun) started inside a task the plugin
tuned as one: this worker's share of the task's CPUs, as srun with one task per worker
would plan it."""
import unittest

import stoker


class LauncherWorkers(unittest.TestCase):
    def test_each_worker_plans_its_share_of_the_agents_cpus(self):
        agent = stoker.plan(environ={})  # this machine, planned as one task (the agent)
        self.assertEqual(agent.local_size, 1)
        env = agent.to_env()
        env.update(WORLD_SIZE="2", LOCAL_WORLD_SIZE="2")
        shares = []
        for rank in (0, 1):
            env.update(RANK=str(rank), LOCAL_RANK=str(rank))
            p = stoker.plan(environ=env)
            self.assertEqual((p.local_rank, p.local_size), (rank, 2))
            self.assertLessEqual(set(p.cpu_list), set(agent.cpu_list))
            self.assertIn("under a launcher", p.reason("source"))
            shares.append(set(p.cpu_list))
        if len(agent.cpu_list) >= 2:
            self.assertFalse(shares[0] & shares[1], "the workers share CPUs")

    def test_without_a_launcher_the_exported_plan_stands(self):
        agent = stoker.plan(environ={})
        p = stoker.plan(environ=agent.to_env())
        self.assertIn("read from the STOKER_* environment", p.reason("source"))
        self.assertEqual(p.cpus, agent.cpus)


if __name__ == "__main__":
    unittest.main()
