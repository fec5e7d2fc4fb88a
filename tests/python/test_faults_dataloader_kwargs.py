"""A script's own DataLoader settings beside the plan's (docs/reliability.md): keeping
`num_workers=args.workers` beside `**stoker.plan().torch_dataloader_kwargs()` was a TypeError
("got multiple values for keyword argument 'num_workers'"), and deleting the line left the
script's `-j` ignored without a word. torch_dataloader_kwargs() now takes num_workers,
pin_memory, prefetch_factor and persistent_workers: yours win, one line on stderr names each
that differs from the plan's, and a value torch would refuse is refused here, naming it."""
import contextlib
import io
import unittest

import torch.utils.data as tud

import stoker
from test_plan import env_plan
from testdata import NoLeftovers

GPU = "0000:07:00.0"  # a plan with a GPU pins memory (no GPU needed: only the settings)


def make_plan(**env):
    values = dict(STOKER_WORKERS="2", STOKER_CPUS="0-1", STOKER_MAIN_CPUS="0",
                  STOKER_WORKER_CPUS="1", STOKER_PREFETCH="4", STOKER_PREFETCH_MAX="8")
    values.update(env)
    return stoker.plan(environ=env_plan(**values))


def kwargs_and_note(plan, *args, **yours):
    """torch_dataloader_kwargs(...) and what it wrote on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        kwargs = plan.torch_dataloader_kwargs(*args, **yours)
    return kwargs, err.getvalue()


def plain(kwargs):
    """The kwargs with worker_init_fn shown by its CPU shares (it is made per call)."""
    out = dict(kwargs)
    if "worker_init_fn" in out:
        out["worker_init_fn"] = out["worker_init_fn"].shares
    return out


class YourSettingsWin(NoLeftovers, unittest.TestCase):
    def test_a_scripts_num_workers_reaches_the_dataloader(self):
        # The reference script's line, changed once: -j kept, the plan's rest taken.
        plan = make_plan()
        kwargs, note = kwargs_and_note(plan, num_workers=1)
        loader = tud.DataLoader(list(range(6)), batch_size=2, **kwargs)
        self.assertEqual(loader.num_workers, 1)
        self.assertEqual([b.tolist() for b in loader], [[0, 1], [2, 3], [4, 5]])
        self.assertEqual(kwargs["prefetch_factor"], plan.torch_prefetch_factor(1))  # 4 per worker
        self.assertEqual(kwargs["worker_init_fn"].shares, plan.worker_shares(1))
        self.assertEqual(note, "stoker: rank 0: torch_dataloader_kwargs: yours kept: "
                               "num_workers=1 (the plan's 2; prefetch_factor 4 for the plan's "
                               "depth)\n")

    def test_every_difference_is_named_in_one_line(self):
        plan = make_plan(STOKER_GPU=GPU, STOKER_PIN_MEMORY="1")
        kwargs, note = kwargs_and_note(plan, num_workers=3, pin_memory=False, prefetch_factor=5,
                                       persistent_workers=False)
        self.assertEqual(note.count("\n"), 1, note)
        self.assertIn("yours kept: num_workers=3 (the plan's 2); pin_memory=False (the plan's "
                      "True); prefetch_factor=5 (the plan's 2); persistent_workers=False (the "
                      "plan's True)", note)
        self.assertEqual(plain(kwargs), {"num_workers": 3, "pin_memory": False,
                                         "prefetch_factor": 5, "persistent_workers": False,
                                         "worker_init_fn": plan.worker_shares(3)})

    def test_the_plans_own_values_say_nothing(self):
        plan = make_plan()
        same, note = kwargs_and_note(plan, num_workers=2, pin_memory=False, prefetch_factor=2,
                                     persistent_workers=True)
        self.assertEqual(note, "")
        self.assertEqual(plain(same), plain(plan.torch_dataloader_kwargs()))

    def test_the_call_without_arguments_is_unchanged(self):
        plan = make_plan(STOKER_GPU=GPU, STOKER_PIN_MEMORY="1")
        kwargs, note = kwargs_and_note(plan)
        self.assertEqual(note, "")
        self.assertEqual(plain(kwargs), {"num_workers": 2, "pin_memory": True,
                                         "pin_memory_device": "cuda", "prefetch_factor": 2,
                                         "persistent_workers": True,
                                         "worker_init_fn": plan.worker_shares(2)})

    def test_pin_memory_false_drops_the_pin_device(self):
        kwargs, _ = kwargs_and_note(make_plan(STOKER_GPU=GPU, STOKER_PIN_MEMORY="1"),
                                    pin_memory=False)
        self.assertNotIn("pin_memory_device", kwargs)

    def test_your_worker_init_fn_still_runs_with_your_workers(self):
        kwargs, _ = kwargs_and_note(make_plan(), _user_init, num_workers=3)
        self.assertIs(kwargs["worker_init_fn"].user_fn, _user_init)
        self.assertEqual(len(kwargs["worker_init_fn"].shares), 3)

    def test_no_workers_of_yours_leaves_out_what_torch_refuses(self):
        kwargs, note = kwargs_and_note(make_plan(), num_workers=0)
        self.assertEqual(kwargs, {"num_workers": 0, "pin_memory": False})
        self.assertIn("num_workers=0 (the plan's 2)", note)
        tud.DataLoader(list(range(4)), **kwargs)
        kwargs, _ = kwargs_and_note(make_plan(), num_workers=0, persistent_workers=False)
        tud.DataLoader(list(range(4)), **kwargs)  # torch takes False without workers


class ValuesTorchWouldRefuse(unittest.TestCase):
    def check(self, error, pattern, **yours):
        with self.assertRaisesRegex(error, pattern):
            make_plan().torch_dataloader_kwargs(**yours)

    def test_each_is_named(self):
        self.check(ValueError, r"^num_workers=-1: must be at least 0", num_workers=-1)
        self.check(TypeError, r"^num_workers must be an int", num_workers=True)
        self.check(TypeError, r"^num_workers must be an int", num_workers=2.0)
        self.check(TypeError, r"^num_workers must be an int", num_workers="4")
        self.check(TypeError, r"^pin_memory must be True or False", pin_memory=1)
        self.check(TypeError, r"^persistent_workers must be True or False",
                   persistent_workers="yes")
        self.check(ValueError, r"^prefetch_factor=0: must be at least 1", prefetch_factor=0)
        self.check(TypeError, r"^prefetch_factor must be an int", prefetch_factor=1.5)

    def test_no_workers_with_settings_for_workers(self):
        self.check(ValueError, r"^prefetch_factor=2 with num_workers=0: torch's "
                               r"DataLoader takes prefetch_factor only with workers",
                   num_workers=0, prefetch_factor=2)
        self.check(ValueError, r"^persistent_workers=True with num_workers=0: ",
                   num_workers=0, persistent_workers=True)

    def test_the_same_values_torch_refuses(self):
        # What the checks above stand for: torch's DataLoader refuses these too.
        for bad in ({"num_workers": -1}, {"num_workers": 0, "prefetch_factor": 4},
                    {"num_workers": 0, "persistent_workers": True}):
            with self.assertRaises(ValueError):
                tud.DataLoader(list(range(4)), **bad)

    def test_the_keywords_are_keyword_only(self):
        with self.assertRaises(TypeError):
            make_plan().torch_dataloader_kwargs(None, 4)


def _user_init(worker_id):
    pass


if __name__ == "__main__":
    unittest.main()
