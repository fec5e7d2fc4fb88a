"""The pinning seam from Python (runtime/python/src/py_pinner.cpp), with plain Python
callables in place of torch's cudaHostRegister (Loader's private _pinner hook): what the
loader asks to page-lock, that it undoes it once, also with the GIL released (close())
and not at all while the interpreter shuts down, and that a pinner that fails leaves a
note and a warning while every sample still arrives (on pageable memory)."""
import gc
import subprocess
import sys
import textwrap
import unittest
import warnings

import numpy as np

import stoker
from testdata import make_records, NoLeftovers, TempDirCase

RECORD = 48  # bytes per record
COUNT = 100


class Pinner:
    """Records the calls; `result` is what pin returns (None: done), `error` what it raises."""

    def __init__(self, result=None, error=None):
        self.result, self.error = result, error
        self.pins, self.unpins = [], []

    def pin(self, ptr, size):
        self.pins.append((ptr, size))
        if self.error is not None:
            raise self.error
        return self.result

    def unpin(self, ptr):
        self.unpins.append(ptr)

    @property
    def hook(self):
        return self.pin, self.unpin


class PinnerSeam(NoLeftovers, TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.path, cls.labels_path, cls.records = make_records(cls.tmp.path, COUNT, RECORD,
                                                              seed=3, label_step=1)

    def loader(self, pinner, **kw):
        kw.setdefault("as_numpy", True)
        return stoker.Loader.records(self.path, record_bytes=RECORD, batch_size=8,
                                     labels_path=self.labels_path, world_size=1, rank=0,
                                     return_indices=True, _pinner=pinner.hook, **kw)

    def assert_every_sample(self, batches):
        seen = np.concatenate([indices for _, _, indices in batches])
        self.assertEqual(sorted(seen.tolist()), list(range(COUNT)))
        for data, labels, indices in batches:
            np.testing.assert_array_equal(np.asarray(data), self.records[np.asarray(indices)])
            np.testing.assert_array_equal(np.asarray(labels), np.asarray(indices))

    def test_pin_covers_every_batch_and_unpin_comes_once_after_the_last_batch(self):
        pinner = Pinner()
        loader = self.loader(pinner, held_batches=16)  # all 13 batches kept: every slot seen
        self.assertEqual(len(pinner.pins), 1, "the arena is pinned once, at construction")
        base, size = pinner.pins[0]
        self.assertFalse([n for n in loader.stats()["notes"] if "page-locked" in n])
        batches = list(loader)
        self.assert_every_sample(batches)
        for data, labels, _ in batches:
            for array in (data, labels):
                ptr = array.__array_interface__["data"][0]
                self.assertGreaterEqual(ptr, base)
                self.assertLessEqual(ptr + array.nbytes, base + size)
        loader.close()
        self.assertEqual(pinner.unpins, [], "batches still held keep the arena pinned")
        del loader, batches, data, labels, array, _
        gc.collect()
        self.assertEqual(pinner.unpins, [base])

    def test_unpin_when_close_frees_the_arena_with_the_gil_released(self):
        pinner = Pinner()
        loader = self.loader(pinner)
        for _ in loader:
            pass
        del _
        gc.collect()
        loader.close()  # the last owner: the arena goes inside close(), GIL released
        self.assertEqual(pinner.unpins, [pinner.pins[0][0]])
        del loader
        gc.collect()
        self.assertEqual(len(pinner.unpins), 1)

    def test_a_pinner_that_raises_is_a_note_and_a_warning_and_every_sample_arrives(self):
        pinner = Pinner(error=RuntimeError("no page-locking today"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = self.loader(pinner)
        notes = [n for n in loader.stats()["notes"] if "page-locked" in n]
        self.assertEqual(len(notes), 1, loader.stats()["notes"])
        self.assertIn("RuntimeError: no page-locking today", notes[0])
        self.assertEqual([str(w.message).count("no page-locking today") for w in caught], [1])
        self.assertIs(caught[0].category, RuntimeWarning)
        self.assert_every_sample([tuple(np.array(a) for a in b) for b in loader])
        loader.close()
        del loader
        gc.collect()
        self.assertEqual(pinner.unpins, [], "nothing was pinned, nothing to undo")

    def test_a_pinner_that_returns_an_error_code_is_a_note(self):
        pinner = Pinner(result=2)  # cudaErrorMemoryAllocation
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loader = self.loader(pinner, as_numpy=False)
        notes = [n for n in loader.stats()["notes"] if "page-locked" in n]
        self.assertEqual(len(notes), 1)
        self.assertIn("returned error code 2", notes[0])
        self.assertEqual(len(caught), 1)
        self.assert_every_sample([tuple(t.numpy().copy() for t in b) for b in loader])
        loader.close()

    def test_no_unpin_while_the_interpreter_shuts_down(self):
        # A loader and a batch left in module globals die in the interpreter's finalization:
        # taking the GIL then would hang, so unpin does nothing (the process is ending).
        script = textwrap.dedent(f"""
            import numpy as np, stoker
            def pin(ptr, size):
                print("pinned", flush=True)
            def unpin(ptr):
                print("unpinned", flush=True)
            loader = stoker.Loader.records({self.path!r}, record_bytes={RECORD}, batch_size=8,
                                           world_size=1, rank=0, as_numpy=True,
                                           _pinner=(pin, unpin))
            batch = next(iter(loader))
            print("exiting", flush=True)
        """)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.split(), ["pinned", "exiting"], run.stderr)


if __name__ == "__main__":
    unittest.main()
