"""Applying the plan to the training loop's thread (stoker.plan(apply=...), stoker.Loader
with plan=None): the calling thread ends up on the plan's main CPUs, the loader's workers
on their shares, torch's intra-op threads one per main CPU, read back from the kernel
(/proc/self/task/<tid>/status, sched_getaffinity) and from torch. Applied by default under
the plugin only; a count the user set is replaced with a warning; a mask the thread cannot
take is a note. Each case runs apply_probe.py in a fresh process (pinning and torch's
thread count belong to the process), with the environment it names."""
import json
import os
import subprocess
import sys
import unittest

import stoker
from apply_probe import cpu_text
from testdata import make_tokens, TempDirCase

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apply_probe.py")


class ApplyPlan(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.tokens = os.path.join(cls.tmp.path, "tokens.bin")
        make_tokens(cls.tokens, 64 * 16 + 1)
        cls.mask = sorted(os.sched_getaffinity(0))
        # The plan this process would compute, as the plugin would export it.
        cls.plugin_env = stoker.plan(apply=False).to_env()

    def probe(self, *args, env=None, plugin=False, prefix=()):
        environ = {k: v for k, v in os.environ.items()
                   if not k.startswith("STOKER_") and k not in ("OMP_NUM_THREADS",
                                                                 "MKL_NUM_THREADS")}
        environ["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
        if plugin:
            environ.update(self.plugin_env)
        environ.update(env or {})
        r = subprocess.run([*prefix, sys.executable, PROBE, self.tokens, *args], env=environ,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr

    def assert_applied(self, out):
        main = out["main_cpus"]
        self.assertEqual(out["main_thread"], cpu_text(main), out)
        self.assertEqual(out["sched_getaffinity"], main, out)
        self.assertEqual(out["workers"], out["worker_shares"], out)
        self.assertEqual(out["reasons"]["main_thread"],
                         f"main thread pinned to CPUs {cpu_text(main)} (main_cpus)")
        if out["torch_threads"] is None:
            self.assertTrue(out["reasons"]["torch_threads"].startswith(
                "torch not imported: its intra-op threads not set"), out)
            return
        self.assertEqual(out["torch_threads"], len(main), out)
        for cpus in out["other_threads"]:  # torch's OpenMP pool, started after the pin
            self.assertEqual(cpus, cpu_text(main), out)

    # Importing torch takes seconds on a busy machine: three cases do, the others need not.
    def test_apply_pins_the_thread_and_replaces_a_users_torch_count_with_a_warning(self):
        want = len(stoker.plan(apply=False).main_cpu_list)
        other = want + 1
        out, _ = self.probe("--apply", "yes", env={"OMP_NUM_THREADS": str(other)})
        self.assert_applied(out)
        self.assertEqual(len(out["warnings"]), 1, out)
        self.assertIn(f"torch intra-op threads {other} -> {want} (one per main CPU), replacing "
                      f"OMP_NUM_THREADS={other} in the environment", out["warnings"][0])
        self.assertEqual(out["reasons"]["torch_threads"],
                         f"torch intra-op threads {other} -> {want} (one per main CPU)")

    def test_a_replaced_user_setting_is_said_once_then_only_in_the_reasons(self):
        want = len(stoker.plan(apply=False).main_cpu_list)
        other = want + 1
        out, err = self.probe("--apply", "yes", "--set-threads", str(other), "--again",
                              str(other + 1), env={"OMP_NUM_THREADS": str(other)})
        self.assertEqual(out["torch_threads"], want, out)
        self.assertEqual(len(out["warnings"]), 1, out)
        self.assertEqual(out["reasons"]["torch_threads"],
                         f"torch intra-op threads {other + 1} -> {want} (one per main CPU)")

    def test_an_earlier_set_num_threads_is_replaced_with_a_warning(self):
        other = len(stoker.plan(apply=False).main_cpu_list) + 1
        out, _ = self.probe("--apply", "yes", "--torch-first", "--set-threads", str(other))
        self.assert_applied(out)
        self.assertEqual(len(out["warnings"]), 1, out)
        self.assertIn(f"replacing an earlier torch.set_num_threads({other})", out["warnings"][0])

    def test_outside_the_plugin_nothing_is_applied_by_default(self):
        out, _ = self.probe("--no-torch")
        self.assertEqual(out["main_thread"], cpu_text(self.mask))
        self.assertEqual(out["reasons"], {})
        out, _ = self.probe("--no-torch", "--loader-plans")
        self.assertEqual(out["main_thread"], cpu_text(self.mask))
        self.assertEqual(out["workers"], out["worker_shares"], out)

    def test_under_the_plugin_it_is_applied_by_default_and_said_once(self):
        out, err = self.probe("--no-torch", plugin=True, env={"STOKER_VERBOSE": "1"})
        self.assertEqual(out["source"], "the STOKER_* environment")
        self.assert_applied(out)
        self.assertEqual(out["warnings"], [])
        lines = [line for line in err.splitlines() if "applied the plan" in line]
        main = cpu_text(out["main_cpus"])
        self.assertEqual(len(lines), 1, err)
        self.assertEqual(lines[0], f"stoker: rank 0: applied the plan: main thread pinned to "
                                   f"CPUs {main} (main_cpus); {out['reasons']['torch_threads']}")
        # A loader that plans by itself applies it the same way.
        out, _ = self.probe("--no-torch", "--loader-plans", plugin=True)
        self.assert_applied(out)
        # apply=False keeps the thread where it was.
        out, _ = self.probe("--no-torch", "--apply", "no", plugin=True)
        self.assertEqual(out["main_thread"], cpu_text(self.mask))

    def test_faults_a_process_bound_outside_the_main_cpus_is_planned_within_its_mask(self):
        """taskset (as numactl or torchrun --numa-binding) narrowed the process to a CPU that is
        not among the plan's main CPUs: the mask is kept and the plan made within it (the
        binders' rule), so the training loop is pinned there; it used to stay unpinned, with
        its workers pinned back onto the plan's other CPUs."""
        if len(self.mask) < 2:
            self.skipTest(f"needs 2 CPUs, this process has {self.mask}")
        main = [int(c) for c in self.plugin_env["STOKER_MAIN_CPUS"].split(",")
                if "-" not in c]
        if not main:
            self.skipTest("the plan's main CPUs are a range")
        outside = [c for c in self.mask if c not in main][0]
        out, _ = self.probe("--no-torch", plugin=True, prefix=("taskset", "-c", str(outside)))
        self.assertEqual(out["main_thread"], str(outside))
        self.assertEqual(out["reasons"]["main_thread"],
                         f"main thread pinned to CPUs {outside} (main_cpus)")
        self.assertIn(f"within this process's mask {outside}, narrower than the plan's CPUs",
                      out["source"])


if __name__ == "__main__":
    unittest.main()
