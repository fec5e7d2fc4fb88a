"""Property tests of the Python API, with Hypothesis: paths of any bytes,
files that change, shrink, vanish or turn into links while read, any number where numbers
go, any batch size against any dataset size, and states of one dataset loaded on another.
Every call returns or raises stoker.Error, ValueError or TypeError with a message that
names the input and a cause that is true for it; never a crash, a hang or an empty message.
The examples per test are few (the python family's budget): each run draws new ones, and
a failure prints its falsifying example (no example database is kept)."""
import errno
import math
import os
import unittest

from hypothesis import HealthCheck, assume, given, settings, strategies as st

import stoker
from testdata import make_tokens, TempDirCase

SEQ = 4
ALLOWED = (stoker.Error, ValueError, TypeError)
FEW = settings(max_examples=30, deadline=None, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def tokens_loader(path, **kw):
    options = dict(seq_len=SEQ, batch_size=4, world_size=1, rank=0, workers=1, as_numpy=True,
                   shuffle=False, agree=False)
    options.update(kw)
    return stoker.Loader.tokens(path, **options)


class Api(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.tokens = os.path.join(cls.tmp.path, "tokens.bin")
        make_tokens(cls.tokens, 64 * SEQ + 1)

    def assert_clean(self, error, *inputs):
        """`error` is allowed, says something, and names one of `inputs` (as text or repr)."""
        self.assertIsInstance(error, ALLOWED, f"{type(error).__name__}: {error}")
        message = str(error)
        self.assertTrue(message.strip(), f"an empty {type(error).__name__} message")
        names = [str(i) for i in inputs] + [repr(i) for i in inputs]
        self.assertTrue(any(n in message for n in names),
                        f"{message!r} names none of {inputs!r}")
        return message

    # ---- paths of any bytes ---------------------------------------------------------------
    @FEW
    @given(st.one_of(st.binary(min_size=1, max_size=300),
                     st.text(min_size=1, max_size=300),
                     st.builds(lambda n: "x" * n, st.integers(250, 5000))))
    def test_any_path_is_a_clean_error_with_a_true_cause(self, name):
        path = (os.fsencode(self.tmp.path) + b"/" + name if isinstance(name, bytes)
                else os.path.join(self.tmp.path, name))
        assume(os.path.abspath(path) not in (os.fsencode(self.tokens), self.tokens))
        try:
            os.stat(path)
            cause = None
        except (OSError, ValueError) as e:  # ValueError: a NUL byte
            cause = e
        try:
            loader = tokens_loader(path)
        except ALLOWED as e:
            message = self.assert_clean(e, path, os.fsdecode(path) if "\0" not in
                                        os.fsdecode(path) else path)
            if isinstance(cause, OSError) and cause.errno != errno.ENOENT:
                # Not "no such file" when the file system said something else.
                self.assertNotIn("no such", message.lower(), f"{cause} gave {message!r}")
                self.assertIn(os.strerror(cause.errno).lower(), message.lower())
            if isinstance(cause, ValueError):
                self.assertIn("NUL", message)
            return
        # Only a real token file may open: one the test made under this name.
        self.assertIsNone(cause, f"{path!r} opened although stat said {cause}")
        loader.close()

    def test_a_link_to_itself_and_a_file_under_a_file_say_so(self):
        loop = os.path.join(self.tmp.path, "loop.bin")
        if not os.path.lexists(loop):
            os.symlink(loop, loop)
        for path, cause in ((loop, errno.ELOOP), (os.path.join(self.tokens, "x"), errno.ENOTDIR)):
            with self.subTest(path=path):
                with self.assertRaises(ALLOWED) as ctx:
                    tokens_loader(path)
                message = self.assert_clean(ctx.exception, path)
                self.assertIn(os.strerror(cause).lower(), message.lower())

    # ---- files that change while read -----------------------------------------------------
    @FEW
    @given(st.sampled_from(["shrink", "vanish", "self-link", "link-elsewhere", "grow", "rewrite"]),
           st.integers(0, 15), st.integers(0, 64 * SEQ * 2))
    def test_a_file_changed_while_read_is_read_or_a_named_error(self, change, at_batch, keep):
        path = os.path.join(self.tmp.path, "changing.bin")
        for p in (path, path + ".new"):
            if os.path.lexists(p):
                os.unlink(p)
        make_tokens(path, 64 * SEQ + 1)
        loader = tokens_loader(path)
        try:
            for i, batch in enumerate(loader):
                if i == at_batch:
                    if change == "shrink":
                        os.truncate(path, keep)
                    elif change == "vanish":
                        os.unlink(path)
                    elif change == "self-link":
                        os.unlink(path)
                        os.symlink(path, path)
                    elif change == "link-elsewhere":
                        os.unlink(path)
                        os.symlink(self.tokens, path)
                    elif change == "grow":
                        with open(path, "ab") as f:
                            f.write(b"\0" * keep)
                    else:
                        make_tokens(path + ".new", 64 * SEQ + 1, seed=5)
                        os.replace(path + ".new", path)
                self.assertEqual(batch[0].shape, (4, SEQ + 1))
        except ALLOWED as e:
            self.assert_clean(e, path)
        finally:
            loader.close()

    # ---- any number where numbers go ------------------------------------------------------
    NUMBERS = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                        st.booleans(), st.none(), st.text(max_size=5))
    KNOBS = ["batch_size", "seq_len", "seed", "workers", "prefetch", "max_depth",
             "held_batches", "max_skip_fraction", "shuffle_buffer", "world_size", "rank"]

    @FEW
    @given(st.sampled_from(KNOBS), NUMBERS)
    def test_any_number_anywhere_is_taken_or_named(self, knob, value):
        kw = {knob: value}
        if knob in ("world_size", "rank"):
            kw = {"world_size": value, "rank": 0} if knob == "world_size" else {
                "world_size": 4, "rank": value}
        if isinstance(value, int) and not isinstance(value, bool) and value > 64 and knob in (
                "workers", "prefetch", "max_depth", "held_batches", "shuffle_buffer"):
            value = kw[knob] = min(value, 2**70)  # huge values must be refused, not allocated
        try:
            loader = tokens_loader(self.tokens, **kw)
        except ALLOWED as e:
            self.assert_clean(e, knob)
            return
        try:
            for _ in zip(range(2), loader):
                pass
        finally:
            loader.close()

    # ---- any batch size against any dataset size -------------------------------------------
    @FEW
    @given(st.integers(1, 40), st.integers(1, 50), st.booleans(), st.integers(1, 4))
    def test_any_batch_size_against_any_dataset_size(self, windows, batch, drop_last, world):
        path = os.path.join(self.tmp.path, f"w{windows}.bin")
        if not os.path.exists(path):
            make_tokens(path, windows * SEQ + 1)
        per_rank = (windows // world if drop_last else math.ceil(windows / world))
        want = per_rank // batch if drop_last else math.ceil(per_rank / batch)
        if want == 0:  # drop_last leaves no whole batch: refused, saying so
            with self.assertRaises(stoker.Error) as ctx:
                tokens_loader(path, batch_size=batch, drop_last=True, world_size=world, rank=0)
            self.assertIn("fewer than one batch", str(ctx.exception))
            return
        seen = []
        for r in range(world):
            loader = tokens_loader(path, batch_size=batch, drop_last=drop_last, world_size=world,
                                   rank=r, return_indices=True)
            try:
                self.assertEqual(len(loader), want)
                batches = 0
                for _, _, indices in loader:  # (each batch's views dropped before the next)
                    batches += 1
                    self.assertLessEqual(len(indices), batch)
                    seen.extend(int(i) for i in indices)
                self.assertEqual(batches, want)
            finally:
                loader.close()
        self.assertTrue(set(seen) <= set(range(windows)))
        if not drop_last:
            self.assertEqual(set(seen), set(range(windows)))

    # ---- a state of one dataset loaded on another ------------------------------------------
    @FEW
    @given(st.integers(2, 30), st.integers(2, 30), st.integers(0, 3), st.booleans())
    def test_a_state_of_another_dataset_is_refused(self, windows_a, windows_b, taken, rewrite):
        a = os.path.join(self.tmp.path, "a.bin")
        b = os.path.join(self.tmp.path, "b.bin")
        make_tokens(a, windows_a * SEQ + 1)
        loader = tokens_loader(a, batch_size=1)
        for _ in zip(range(min(taken, windows_a - 1)), loader):
            pass
        state = loader.state_dict()
        loader.close()
        if rewrite:  # the same file, name and size, rewritten with other tokens
            make_tokens(a, windows_a * SEQ + 1, seed=9)
        else:
            make_tokens(b, windows_b * SEQ + 1, seed=9)
        other = tokens_loader(a if rewrite else b, batch_size=1)
        try:
            other.load_state_dict(state)
            self.fail(f"a state of {a} was loaded on another dataset (rewrite={rewrite})")
        except ALLOWED as e:
            self.assertIsInstance(e, stoker.Error)
            self.assertIn("fingerprint" if rewrite or windows_a == windows_b else "samples",
                          str(e))
        finally:
            other.close()

    @FEW
    @given(st.one_of(st.text(max_size=200), st.dictionaries(st.text(max_size=8),
                                                            st.text(max_size=50), max_size=3),
                     st.integers(), st.none()))
    def test_any_state_text_is_refused_cleanly(self, state):
        loader = tokens_loader(self.tokens)
        try:
            loader.load_state_dict({"sampler": state} if isinstance(state, str) else state)
        except ALLOWED as e:
            self.assertTrue(str(e).strip())
        finally:
            loader.close()


if __name__ == "__main__":
    unittest.main()
