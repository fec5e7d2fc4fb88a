"""stoker.plan(): from the STOKER_* environment or computed; its fields, repr and the
DataLoader keyword arguments it implies."""
import math
import os
import pickle
import unittest
import warnings

import stoker


def env_plan(**changes):
    """A plugin-style environment: this machine's computed plan as STOKER_* variables,
    with `changes` applied (None removes a variable)."""
    env = stoker.plan(environ={}).to_env()
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


class PrefetchContract(unittest.TestCase):
    def test_limits_come_from_the_cpp_header(self):
        from stoker import _stoker

        self.assertEqual(_stoker.limits["max_prefetch"], 4096)
        self.assertEqual(_stoker.limits["max_workers"], 1024)
        p = stoker.plan(environ={})
        self.assertLessEqual(p.prefetch, p.prefetch_max)
        self.assertLessEqual(p.prefetch_max, _stoker.limits["max_prefetch"])
        self.assertTrue(p.reason("prefetch_max"))

    def test_prefetch_max_is_read_from_the_environment(self):
        p = stoker.plan(environ=env_plan(STOKER_PREFETCH="3", STOKER_PREFETCH_MAX="3"))
        self.assertEqual((p.prefetch, p.prefetch_max), (3, 3))
        self.assertEqual(p.to_env()["STOKER_PREFETCH_MAX"], "3")
        with self.assertRaises(ValueError) as ctx:  # below STOKER_PREFETCH
            stoker.plan(environ=env_plan(STOKER_PREFETCH="5", STOKER_PREFETCH_MAX="4"))
        self.assertIn("STOKER_PREFETCH_MAX", str(ctx.exception))


class ComputedPlan(unittest.TestCase):
    def test_fields_describe_this_process(self):
        p = stoker.plan(environ={})
        self.assertTrue(p.source.startswith("computed"), p.source)
        allowed = os.sched_getaffinity(0)
        self.assertTrue(set(p.cpu_list) <= allowed)
        self.assertTrue(set(p.worker_cpu_list) <= set(p.cpu_list))
        self.assertTrue(set(p.main_cpu_list) <= set(p.cpu_list))
        self.assertGreaterEqual(p.workers, 1)
        self.assertGreaterEqual(p.prefetch, 1)
        self.assertGreater(p.mem_budget, 0)
        self.assertIsInstance(p.pin_memory, bool)
        self.assertIsInstance(p.nics, list)
        self.assertIsInstance(p.numa, list)
        self.assertTrue(p.reasons and all(len(r) == 2 for r in p.reasons))
        self.assertTrue(p.reason("workers"))
        # The string and list forms agree.
        self.assertEqual(stoker.split_cpus(p.cpus, 1), [p.cpu_list])

    def test_repr_is_readable(self):
        p = stoker.plan(environ={})
        text = repr(p)
        for word in ("stoker.Plan(", "workers=", "prefetch=", "prefetch_max=", "worker_cpus=",
                     "mem_budget=",
                     "reasons:", p.reason("workers").split(";")[0]):
            self.assertIn(word, text)


class EnvironmentPlan(unittest.TestCase):
    def test_round_trip_through_the_environment(self):
        computed = stoker.plan(environ={})
        p = stoker.plan(environ=env_plan())
        self.assertEqual(p.source, "the STOKER_* environment")
        for field in ("cpus", "main_cpus", "worker_cpus", "workers", "prefetch", "prefetch_max",
                      "mem_budget", "gpu", "nics", "profile", "pin_memory", "numa"):
            self.assertEqual(getattr(p, field), getattr(computed, field), field)

    def test_plugin_values_are_taken_as_given(self):
        p = stoker.plan(environ=env_plan(STOKER_WORKERS="3", STOKER_PREFETCH="7",
                                         STOKER_WORKER_CPUS="1", STOKER_MAIN_CPUS="0"))
        self.assertEqual((p.workers, p.prefetch, p.worker_cpu_list), (3, 7, [1]))

    def test_garbled_variable_is_a_value_error_naming_it(self):
        for name, value in (("STOKER_WORKERS", "many"), ("STOKER_CPUS", "0-x"),
                            ("STOKER_MEM_BUDGET", "-5"), ("STOKER_PREFETCH_MAX", "0")):
            with self.subTest(name=name):
                with self.assertRaises(ValueError) as ctx:
                    stoker.plan(environ=env_plan(**{name: value}))
                self.assertIn(name, str(ctx.exception))

    def test_another_releases_contract_is_computed_here_not_misread(self):
        p = stoker.plan(environ=env_plan(STOKER_PLAN_VERSION="99", STOKER_WORKERS="many"))
        self.assertTrue(p.source.startswith("computed"), p.source)

    def test_missing_variable_is_a_value_error_naming_it(self):
        with self.assertRaises(ValueError) as ctx:
            stoker.plan(environ=env_plan(STOKER_WORKER_CPUS=None))
        self.assertIn("STOKER_WORKER_CPUS", str(ctx.exception))

    def test_variables_without_version_are_ignored_with_a_warning(self):
        env = {"STOKER_WORKERS": "7"}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            p = stoker.plan(environ=env)
        self.assertTrue(p.source.startswith("computed"))
        self.assertTrue(any("STOKER_WORKERS" in str(w.message) for w in caught), caught)

    def test_reads_os_environ_by_default(self):
        saved = dict(os.environ)
        try:
            os.environ.update(env_plan(STOKER_WORKERS="2", STOKER_PREFETCH="5"))
            p = stoker.plan()
            self.assertEqual((p.source, p.workers, p.prefetch),
                             ("the STOKER_* environment", 2, 5))
        finally:
            os.environ.clear()
            os.environ.update(saved)


class DataLoaderKwargs(unittest.TestCase):
    def kwargs(self, **env):
        return stoker.plan(environ=env_plan(**env)).torch_dataloader_kwargs()

    def test_prefetch_is_per_worker_and_rounded_up(self):
        for workers, prefetch, per_worker in ((1, 2, 2), (3, 7, 3), (4, 4, 1), (4, 1, 1)):
            env = dict(STOKER_WORKERS=str(workers), STOKER_PREFETCH=str(prefetch),
                       STOKER_PREFETCH_MAX=str(max(prefetch, 8)))
            kw = self.kwargs(**env)
            self.assertEqual(kw["num_workers"], workers)
            self.assertEqual(kw["prefetch_factor"], per_worker)
            self.assertEqual(kw["prefetch_factor"], max(1, math.ceil(prefetch / workers)))
            self.assertIs(kw["persistent_workers"], True)
            plan = stoker.plan(environ=env_plan(**env))
            self.assertEqual(plan.torch_prefetch_factor(), per_worker)

    def test_worker_shares_follow_the_loader_rule(self):
        kw = self.kwargs(STOKER_WORKERS="2", STOKER_CPUS="0-1", STOKER_WORKER_CPUS="0-1")
        self.assertEqual(kw["worker_init_fn"].shares, [[0], [1]])
        # More workers than worker CPUs: they spread over the rank's CPUs, as in the loader.
        kw = self.kwargs(STOKER_WORKERS="3", STOKER_CPUS="0-1", STOKER_MAIN_CPUS="0",
                         STOKER_WORKER_CPUS="1")
        self.assertEqual(kw["worker_init_fn"].shares, [[1], [0], [1]])

    def test_pin_memory_only_with_a_gpu(self):
        self.assertIs(self.kwargs(STOKER_GPU="", STOKER_PIN_MEMORY="1")["pin_memory"], False)
        kw = self.kwargs(STOKER_GPU="0000:07:00.0", STOKER_PIN_MEMORY="1")
        self.assertIs(kw["pin_memory"], True)
        self.assertEqual(kw["pin_memory_device"], "cuda")  # torch 1.13's DataLoader takes it
        self.assertNotIn("pin_memory_device", self.kwargs(STOKER_GPU="", STOKER_PIN_MEMORY="1"))

    def test_worker_init_fn_pickles_for_spawn(self):
        fn = self.kwargs()["worker_init_fn"]
        clone = pickle.loads(pickle.dumps(fn))
        self.assertEqual(clone.shares, fn.shares)

    def test_accepted_by_torch_dataloader(self):
        import torch.utils.data as tud

        loader = tud.DataLoader(list(range(10)), batch_size=2, **self.kwargs())
        self.assertEqual(loader.num_workers, stoker.plan(environ=env_plan()).workers)


if __name__ == "__main__":
    unittest.main()
