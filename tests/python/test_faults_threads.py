"""A thread the system refuses (ulimit -u as an ordinary user) used to abort the process
("terminate called without an active exception"), the Python interpreter with it. Now it is
a stoker.Error naming the limit with its numbers, and the process goes on. Run for real: a
child process as user nobody under a small RLIMIT_NPROC (root only; skipped otherwise)."""
import os
import pwd
import resource
import subprocess
import sys
import textwrap
import unittest

from testdata import make_tokens, NoLeftovers, TempDirCase

SEQ = 16
LIMIT = 12  # threads user nobody may run (the child's own included)


def as_nobody(user):
    """preexec_fn: become `user` under ulimit -u LIMIT (set while still root)."""
    def become():
        resource.setrlimit(resource.RLIMIT_NPROC, (LIMIT, LIMIT))
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    return become


@unittest.skipUnless(os.geteuid() == 0, "needs root, to run a child as user nobody")
class ThreadLimit(NoLeftovers, TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            cls.user = pwd.getpwnam("nobody")
        except KeyError:
            raise unittest.SkipTest("no user nobody on this machine")
        super().setUpClass()  # makes cls.tmp
        os.chmod(cls.tmp.path, 0o755)
        cls.path = os.path.join(cls.tmp.path, "tokens.bin")
        make_tokens(cls.path, 400 * SEQ + 1)
        os.chmod(cls.path, 0o644)

    def run_as_nobody(self, args):
        return subprocess.run(args, capture_output=True, text=True, timeout=120,
                              preexec_fn=as_nobody(self.user), cwd="/")

    def test_python_gets_stoker_error_and_lives_on(self):
        script = textwrap.dedent(f"""
            import stoker
            try:
                stoker.Loader.tokens({self.path!r}, seq_len={SEQ}, batch_size=8, workers=40,
                                     world_size=1, rank=0, as_numpy=True)
                print("no error")
            except stoker.Error as e:
                print("error:", e)
            loader = stoker.Loader.tokens({self.path!r}, seq_len={SEQ}, batch_size=8,
                                          workers=2, world_size=1, rank=0, as_numpy=True)
            print("alive", sum(1 for _ in loader) == len(loader))
            """)
        result = self.run_as_nobody([sys.executable, "-c", script])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(" of 40: cannot be started: ", result.stdout)
        self.assertIn(f"ulimit -u (RLIMIT_NPROC) is {LIMIT} and user nobody (uid "
                      f"{self.user.pw_uid}) runs ", result.stdout)
        self.assertIn("use fewer workers", result.stdout)
        self.assertIn("alive True", result.stdout)

    def test_stoker_bench_says_which_limit(self):
        result = self.run_as_nobody([os.environ["STOKER_BIN"], "bench", "tokens", self.path,
                                     "--seq-len", str(SEQ), "--workers", "40"])
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(" of 40: cannot be started: ", result.stderr)
        self.assertIn(f"ulimit -u (RLIMIT_NPROC) is {LIMIT}", result.stderr)


if __name__ == "__main__":
    unittest.main()
