"""Signals while the consumer waits in next() for a slow batch: Ctrl-C (KeyboardInterrupt)
and a SIGTERM handler that checkpoints run within a wait slice, not when the batch comes,
and closing the loader (or the interpreter's exit) does not wait for the samples in flight.
The slow batch is real work: one worker decoding large JPEGs at full size, a batch sized to
take 20 s here; every bound below is generous for a loaded machine and far below that."""
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

import stoker
from testdata import make_slow_images, NoLeftovers, TempDirCase

BATCH_SECONDS = 20
BOUND = 2.0  # seconds from the signal to its handler, and for close()


class Signals(NoLeftovers, TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.options, cls.per_image = make_slow_images(cls.tmp.path, BATCH_SECONDS)

    def loader(self):
        return stoker.Loader.images(self.tmp.path, **self.options)

    def send_later(self, signum, delay=0.5):
        """Sends `signum` to this process after `delay`; returns the send time (a list)."""
        sent = []

        def send():
            sent.append(time.monotonic())
            os.kill(os.getpid(), signum)

        timer = threading.Timer(delay, send)
        timer.start()
        self.addCleanup(timer.cancel)
        return sent

    def test_ctrl_c_while_waiting_raises_at_once_and_close_does_not_wait(self):
        loader = self.loader()
        sent = self.send_later(signal.SIGINT)
        with self.assertRaises(KeyboardInterrupt):
            for _batch in loader:
                self.fail("the slow batch arrived before the signal: the test proves nothing")
        raised = time.monotonic()
        self.assertLess(raised - sent[0], BOUND, "KeyboardInterrupt waited for the batch")
        start = time.monotonic()
        loader.close()
        self.assertLess(time.monotonic() - start, BOUND, "close() waited for the batch")

    def test_a_sigterm_handler_checkpoints_while_waiting(self):
        loader = self.loader()
        seen = {}

        class Preempted(Exception):
            pass

        def on_term(signum, frame):
            seen["at"] = time.monotonic()
            seen["state"] = loader.state_dict()  # the checkpoint: the loader is usable here
            raise Preempted()

        previous = signal.signal(signal.SIGTERM, on_term)
        self.addCleanup(signal.signal, signal.SIGTERM, previous)
        sent = self.send_later(signal.SIGTERM)
        with self.assertRaises(Preempted):
            for _batch in loader:
                self.fail("the slow batch arrived before the signal")
        self.assertLess(seen["at"] - sent[0], BOUND, "the handler waited for the batch")
        self.assertEqual((seen["state"]["epoch"], seen["state"]["consumed"]), (0, 0))
        start = time.monotonic()
        del loader  # the destructor after an interrupt does not wait either
        self.assertLess(time.monotonic() - start, BOUND)

    def test_a_handler_that_closes_the_loader_ends_the_loop(self):
        loader = self.loader()

        def on_term(signum, frame):
            loader.close()

        previous = signal.signal(signal.SIGTERM, on_term)
        self.addCleanup(signal.signal, signal.SIGTERM, previous)
        sent = self.send_later(signal.SIGTERM)
        batches = sum(1 for _ in loader)
        self.assertEqual(batches, 0)
        self.assertLess(time.monotonic() - sent[0], BOUND, "the loop waited for the batch")
        with self.assertRaises(ValueError):
            next(iter(loader))  # closed

    def test_the_interpreter_exits_at_once_on_ctrl_c(self):
        # A training script interrupted while it waits: KeyboardInterrupt ends it, and the
        # interpreter's exit (the loader's destructor) does not wait for the batch.
        script = ("import stoker, sys\n"
                  f"loader = stoker.Loader.images({self.tmp.path!r}, **{self.options!r})\n"
                  "print('waiting', flush=True)\n"
                  "for batch in loader:\n"
                  "    pass\n")
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        self.addCleanup(child.kill)
        self.assertEqual(child.stdout.readline().strip(), "waiting")
        time.sleep(0.5)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        try:
            child.wait(timeout=BATCH_SECONDS / 2)
        except subprocess.TimeoutExpired:
            self.fail("the interrupted script did not exit")
        self.assertLess(time.monotonic() - sent, 2 * BOUND)
        self.assertIn("KeyboardInterrupt", child.stderr.read())


if __name__ == "__main__":
    unittest.main()
