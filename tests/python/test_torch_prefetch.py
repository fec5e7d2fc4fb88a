"""One conversion of the plan's whole-rank depth to PyTorch's per-worker prefetch_factor:
Plan.torch_prefetch_factor(), used by torch_dataloader_kwargs() and by the DDP template.
The fault it fixes: the template converted with max(2, ...) and the Python module with
max(1, ...), so a job with as many workers as batches in flight kept twice the plan's
depth (and memory) under the template."""
import math
import os
import unittest

import stoker
from test_plan import env_plan
from testdata import NoLeftovers

TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sbatch_templates",
                        "pytorch_ddp_train.py")


class TorchPrefetchFactor(NoLeftovers, unittest.TestCase):
    def test_one_conversion_for_any_worker_count(self):
        plan = stoker.plan(environ=env_plan(STOKER_PREFETCH="6", STOKER_PREFETCH_MAX="24"))
        self.assertEqual([plan.torch_prefetch_factor(w) for w in (1, 2, 4, 6, 12)],
                         [6, 3, 2, 1, 1])
        for w in (1, 2, 4, 6, 12):  # the fewest batches in flight at or above the plan's
            self.assertGreaterEqual(w * plan.torch_prefetch_factor(w), 6)
            self.assertEqual(plan.torch_prefetch_factor(w), max(1, math.ceil(6 / w)))
        with self.assertRaises(ValueError):
            plan.torch_prefetch_factor(0)

    def test_as_many_workers_as_batches_keep_the_plans_depth(self):
        plan = stoker.plan(environ=env_plan(STOKER_WORKERS="4", STOKER_PREFETCH="4",
                                            STOKER_PREFETCH_MAX="16"))
        kwargs = plan.torch_dataloader_kwargs()
        self.assertEqual(kwargs["prefetch_factor"], 1)  # 4 in flight, not 8
        self.assertEqual(kwargs["prefetch_factor"], plan.torch_prefetch_factor())

    def test_the_ddp_template_uses_the_same_conversion(self):
        # The template takes the DataLoader's settings from the plan, and does not read
        # STOKER_PREFETCH to convert it a second way.
        with open(TEMPLATE) as f:
            text = f.read()
        self.assertIn("stoker.plan()", text)
        self.assertIn(".torch_dataloader_kwargs()", text)
        self.assertNotIn('"STOKER_PREFETCH"', text)


if __name__ == "__main__":
    unittest.main()
