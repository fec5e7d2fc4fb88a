"""Inputs a user can get wrong from Python, each once silently wrong or fatal: a second
loop over an epoch in progress (batch 0 came twice), a token file rewritten while loaded
(SIGBUS killed the interpreter), a profiles path that is a folder (the built-in profiles
were used without a word), negative values for unsigned arguments, a token folder holding a
link to itself (a bare RuntimeError), a batch too big for the budget (the message did not name
batch_size). The last two were found by python.hypothesis_api."""
import os
import unittest

import stoker
from testdata import NoLeftovers, TempDir, make_tokens

SEQ = 16


class Inputs(NoLeftovers, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.tmp = TempDir()
        self.addCleanup(self.tmp.cleanup)
        self.path = os.path.join(self.tmp.path, "tokens.bin")
        make_tokens(self.path, 400 * SEQ + 1)

    def loader(self, shuffle=False, batch_size=8, **kw):
        return stoker.Loader.tokens(self.path, seq_len=SEQ, batch_size=batch_size, world_size=1,
                                    rank=0, shuffle=shuffle, return_indices=True, as_numpy=True,
                                    **kw)

    # ---- a second loop ------------------------------------------------------------------
    def test_a_second_loop_over_an_epoch_in_progress_is_an_error(self):
        loader = self.loader()
        first = iter(loader)
        self.assertEqual(next(first)[2][0], 0)
        with self.assertRaises(stoker.Error) as ctx:
            next(iter(loader))
        message = str(ctx.exception)
        self.assertIn(f"a loop over epoch 0 is in progress (1 of {len(loader)} batches taken)",
                      message)
        self.assertIn("finish or break the first loop", message)
        self.assertIn("set_epoch(e)", message)
        # The first loop goes on where it was: batch 0 never comes twice.
        starts = [indices[0] for _, _, indices in first]
        self.assertEqual(starts, [8 * b for b in range(1, len(loader))])

    def test_a_loop_broken_out_of_or_closed_is_over(self):
        loader = self.loader()
        for _ in loader:
            break  # CPython closes the loop's iterator as the for loop exits
        self.assertEqual(next(iter(loader))[2][0], 0)  # (a temporary iterator: closed too)
        it = iter(loader)
        next(it)
        it.close()
        it = iter(loader)
        next(it)
        del it
        self.assertEqual(sum(1 for _ in loader), len(loader))
        self.assertEqual(sum(1 for _ in loader), len(loader))  # an exhausted loop is over

    def test_set_epoch_lets_a_new_loop_replace_the_one_in_progress(self):
        loader = self.loader(shuffle=True)
        first = iter(loader)
        next(first)
        loader.set_epoch(1)
        second = iter(loader)
        self.assertEqual(sum(1 for _ in second), len(loader))
        self.assertEqual(loader.epoch, 2)
        with self.assertRaises(stoker.Error) as ctx:
            next(first)
        self.assertIn("this loop over epoch 0 was replaced by a newer one", str(ctx.exception))

    # ---- a token file that shrinks while loaded -----------------------------------------
    def test_a_token_file_that_shrinks_while_loaded_is_an_error_naming_it(self):
        loader = self.loader(shuffle=True)
        it = iter(loader)
        next(it)
        os.truncate(self.path, 4096)  # rewritten in place, shorter
        with self.assertRaises(stoker.Error) as ctx:
            for _ in it:
                pass
        self.assertIn(self.path, str(ctx.exception))
        self.assertIn("shrank while in use", str(ctx.exception))

    # ---- a profiles path that is no file ------------------------------------------------
    def test_a_profiles_path_that_is_a_folder_is_an_error(self):
        os.environ["STOKER_PROFILES"] = self.tmp.path
        self.addCleanup(os.environ.pop, "STOKER_PROFILES")
        for make in (lambda: stoker.plan(environ={}), self.loader):
            with self.assertRaises(stoker.Error) as ctx:
                make()
            self.assertIn(f"{self.tmp.path}: is a folder, not a profiles file",
                          str(ctx.exception))

    # ---- the plugin's plan checked against this machine --------------------------------
    def plugin_plan(self):
        """This machine's plan as the plugin exports it; the environment is restored after."""
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        return stoker.plan(environ={}).to_env()

    def test_a_plan_this_machine_cannot_hold_names_the_variable(self):
        plugin = self.plugin_plan()
        cases = (("STOKER_CPUS", "999-1000",
                  "STOKER_CPUS: names CPUs 999-1000 that this machine does not have"),
                 ("STOKER_NUMA", "7", "STOKER_NUMA: names NUMA node 7, which this machine "
                                      "does not have"),
                 ("STOKER_MEM_BUDGET", "0", "STOKER_MEM_BUDGET: is 0: a budget of 0 bytes "
                                            "holds no batch"))
        for name, value, expected in cases:
            with self.assertRaises(ValueError, msg=name) as ctx:
                stoker.plan(environ=dict(plugin, **{name: value}))
            self.assertIn(expected, str(ctx.exception))
            os.environ.update(plugin)
            os.environ[name] = value
            with self.assertRaises(stoker.Error, msg=name) as ctx:
                self.loader()
            self.assertIn(expected, str(ctx.exception))
        os.environ.update(plugin)
        os.environ["STOKER_MEM_BUDGET"] = "100"  # below one batch of 8 x 17 tokens
        with self.assertRaises(stoker.Error) as ctx:
            self.loader()
        self.assertIn("STOKER_MEM_BUDGET: is 100 bytes, below the ", str(ctx.exception))

    # ---- negative values for unsigned arguments -----------------------------------------
    def test_negative_values_name_the_argument(self):
        cases = {
            "seq_len": lambda: stoker.Loader.tokens(self.path, seq_len=-5),
            "seed": lambda: self.loader(seed=-1),
            "epoch": lambda: self.loader().set_epoch(-1),
            "index": lambda: stoker.crop_box(64, 64, 0, 0, -3, {}),
            "epoch=": lambda: stoker.flipped(0, -2, 0, {}),
            "n": lambda: stoker.split_cpus("0-3", -1),
            "workers": lambda: stoker.plan().worker_shares(-2),
        }
        for name, call in cases.items():
            with self.assertRaises(ValueError, msg=name) as ctx:
                call()
            self.assertIn(name.rstrip("=") + "=-", str(ctx.exception))

    # ---- found by the property tests -----------------------------------------------------
    def test_a_token_folder_holding_a_link_to_itself_is_an_error_naming_the_link(self):
        link = os.path.join(self.tmp.path, "loop.bin")
        os.symlink("loop.bin", link)
        with self.assertRaises(stoker.Error) as ctx:
            stoker.Loader.tokens(self.tmp.path, seq_len=SEQ, batch_size=8, world_size=1, rank=0)
        self.assertIn(f"{link}: cannot be read: Too many levels of symbolic links",
                      str(ctx.exception))

    def test_a_batch_too_big_for_the_budget_names_batch_size(self):
        os.environ.update(self.plugin_plan(), STOKER_MEM_BUDGET=str(1 << 20))
        with self.assertRaises(stoker.Error) as ctx:
            self.loader(batch_size=100_000)  # 3 batches do not fit the plugin's budget
        self.assertIn("or lower batch_size or held_batches", str(ctx.exception))
        os.environ.update(STOKER_MEM_BUDGET=str(16 << 20))
        with self.assertRaises(stoker.Error) as ctx:
            self.loader(batch_size=10_000, max_depth=32)  # 3 do, a ring of 32 does not
        self.assertIn("LoaderOptions::batch_size: a batch of 10000 samples", str(ctx.exception))
        with self.assertRaises((stoker.Error, ValueError)) as ctx:
            self.loader(batch_size=0)
        self.assertIn("batch_size", str(ctx.exception))

if __name__ == "__main__":
    unittest.main()
