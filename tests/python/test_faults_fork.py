"""fork() while a stoker.Loader runs, as DataLoader-style libraries and multiprocessing do:
the child's inherited loader has no worker threads. Using it raises stoker.Error ("created
in another process; make a new one in the child"); a child that only exits (with the
interpreter's finalizers and destructors, or through os._exit) does not hang; a new loader
in the child works, and the parent's loader is unaffected."""
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
import unittest

import stoker
from testdata import make_tokens, NoLeftovers, TempDirCase

SEQ = 16
TIMEOUT = 180  # a child that hangs is killed after this and the test fails (a child's
# interpreter exit takes seconds on a loaded 2-core machine: generous, not tight)


def wait_or_kill(pid, timeout=TIMEOUT):
    """The child's exit status, or None when it hung (then it is killed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def use_inherited(loader, queue):
    """multiprocessing target: every use of the parent's loader must raise stoker.Error."""
    errors = []
    for use in (lambda: next(iter(loader)), loader.state_dict, lambda: loader.set_epoch(2),
                lambda: len(loader)):
        try:
            use()
            errors.append("no error")
        except stoker.Error as e:
            errors.append(str(e))
    queue.put(errors)


def only_exit(loader):
    """multiprocessing target that leaves the inherited loader alone."""


class Fork(NoLeftovers, TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.path = os.path.join(cls.tmp.path, "tokens.bin")
        make_tokens(cls.path, 400 * SEQ + 1)

    def loader(self):
        return stoker.Loader.tokens(self.path, seq_len=SEQ, batch_size=8, world_size=1, rank=0)

    def test_os_fork_child_refuses_the_inherited_loader(self):
        loader = self.loader()
        it = iter(loader)
        held = next(it)  # workers busy filling the ring, a batch held across the fork
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: report through the pipe, leave through os._exit
            code = 1
            try:
                os.close(read)
                try:
                    next(it)
                    message = "no error"
                except stoker.Error as e:
                    message = str(e)
                fresh = self.loader()  # a new loader in the child works
                ok = sum(1 for _ in fresh) == len(fresh)
                del held, it, loader  # the inherited batch and loader go without a hang
                os.write(write, f"{ok}\n{message}".encode())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        status = wait_or_kill(pid)
        with os.fdopen(read) as f:
            ok, message = f.read().split("\n", 1)
        self.assertEqual(status, 0, message)
        self.assertEqual(ok, "True")
        self.assertIn(f"stoker.Loader: was created in another process (pid {os.getpid()}); "
                      "this is a forked child", message)
        self.assertIn("make a new one in the child", message)
        rest = sum(1 for _ in it)  # the parent's loop goes on
        self.assertEqual(rest + 1, len(loader))
        del held

    def test_a_forked_child_that_exits_through_the_interpreter_does_not_hang(self):
        # The child returns from the script: the interpreter runs its finalizers and the
        # loader's and the batches' destructors in a process without the worker threads.
        script = textwrap.dedent(f"""
            import os, stoker, sys
            loader = stoker.Loader.tokens({self.path!r}, seq_len={SEQ}, batch_size=8,
                                          world_size=1, rank=0)
            it = iter(loader)
            held = next(it)
            for i in range(3):
                pid = os.fork()
                if pid == 0:
                    sys.exit(0)  # finalizers, destructors, atexit
                _, status = os.waitpid(pid, 0)
                assert status == 0, status
            print("ok", sum(1 for _ in it) + 1 == len(loader))
            """)
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=TIMEOUT)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), "ok True")

    def test_multiprocessing_fork_children(self):
        loader = self.loader()
        next(iter(loader))
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        user = ctx.Process(target=use_inherited, args=(loader, queue))
        user.start()
        errors = queue.get(timeout=TIMEOUT)
        user.join(TIMEOUT)
        self.assertEqual(user.exitcode, 0)
        self.assertEqual(len(errors), 4)
        for error in errors:
            self.assertIn("was created in another process", error)
        idle = ctx.Process(target=only_exit, args=(loader,))
        idle.start()
        idle.join(TIMEOUT)
        self.assertEqual(idle.exitcode, 0, "the child that only exits hung or failed")
        queue.close()
        queue.join_thread()
        self.assertEqual(sum(1 for _ in loader), len(loader))


if __name__ == "__main__":
    unittest.main()
