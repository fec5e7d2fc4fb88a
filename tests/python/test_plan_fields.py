"""The C++ table of the Plan's fields (plan_fields.hpp) reaches Python: every field is an
attribute of stoker.Plan, and round-trips env -> Plan -> JSON (`stoker plan --json`) ->
Python with the same value, to_env() writing each variable back as it was given."""
import json
import os
import subprocess
import unittest

import stoker
from stoker import _stoker


def example_env():
    """STOKER_PLAN_VERSION and every field's example value (the table's)."""
    env = {"STOKER_PLAN_VERSION": "1"}
    env.update({var: example for _name, var, example in _stoker.plan_fields})
    return env


class PlanFields(unittest.TestCase):
    def test_every_field_is_an_attribute_of_the_python_plan(self):
        self.assertTrue(_stoker.plan_fields)
        for name, _var, _example in _stoker.plan_fields:
            self.assertIsInstance(getattr(stoker.Plan, name, None), property, name)

    def test_every_field_round_trips_env_plan_json_python(self):
        env = example_env()
        plan = stoker.plan(environ=env, apply=False)
        self.assertEqual(plan.source, "the STOKER_* environment")
        run = subprocess.run([os.environ["STOKER_BIN"], "plan", "--json"],
                             env=dict(env, PATH=os.environ.get("PATH", "")),
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        shown = json.loads(run.stdout)
        written = plan.to_env()
        for name, var, example in _stoker.plan_fields:
            with self.subTest(field=name):
                self.assertEqual(written[var], example)
                self.assertEqual(getattr(plan, name), shown[name])
        self.assertEqual(written, env)


if __name__ == "__main__":
    unittest.main()
