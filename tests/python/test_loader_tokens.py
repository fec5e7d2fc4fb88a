"""stoker.Loader.tokens: windows with the right values, every sample once per epoch,
resume through state_dict on another world size, argument errors."""
import os
import unittest

import numpy as np
import torch

import stoker
from testdata import make_tokens, TempDirCase

SEQ = 8


class TokenLoader(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.path = os.path.join(cls.tmp.path, "tokens.bin")
        # 104 windows of SEQ + 1 tokens (stride SEQ): (tokens - 1) / SEQ = 104.
        cls.tokens = make_tokens(cls.path, 104 * SEQ + 1)
        cls.path32 = os.path.join(cls.tmp.path, "tokens32.bin")
        cls.tokens32 = make_tokens(cls.path32, 50 * SEQ + 1, dtype="uint32")

    def loader(self, path=None, **kw):
        kw.setdefault("world_size", 1)
        kw.setdefault("rank", 0)
        return stoker.Loader.tokens(path or self.path, seq_len=SEQ, batch_size=4,
                                    return_indices=True, **kw)

    def window(self, tokens, i):
        return tokens[i * SEQ:(i + 1) * SEQ + 1].astype(np.int64)

    def test_values_and_exactly_once(self):
        loader = self.loader(seed=3)
        self.assertEqual(len(loader), 26)
        seen = []
        for data, labels, indices in loader:
            self.assertEqual(data.dtype, torch.int64)
            self.assertEqual(tuple(data.shape), (4, SEQ + 1))
            self.assertEqual(labels.tolist(), [0] * 4)
            for row, i in zip(data.numpy(), indices.tolist()):
                np.testing.assert_array_equal(row, self.window(self.tokens, i))
            seen += indices.tolist()
        self.assertEqual(sorted(seen), list(range(104)))
        self.assertNotEqual(seen, sorted(seen))  # shuffled

    def test_epochs_are_seeded_orders(self):
        def order(epoch, seed=0):
            loader = self.loader(seed=seed)
            loader.set_epoch(epoch)
            return [i for _, _, idx in loader for i in idx.tolist()]

        self.assertEqual(order(1), order(1))
        self.assertNotEqual(order(1), order(2))
        self.assertNotEqual(order(1), order(1, seed=9))

    def test_uint32_tokens(self):
        for data, _, indices in self.loader(self.path32, dtype="uint32"):
            for row, i in zip(data.numpy(), indices.tolist()):
                np.testing.assert_array_equal(row, self.window(self.tokens32, i))

    def test_raw_tokens_as_numpy(self):
        loader = self.loader(widen=False, as_numpy=True)
        data, _, indices = next(iter(loader))
        self.assertEqual(data.dtype, np.uint16)
        np.testing.assert_array_equal(data[0], self.tokens[int(indices[0]) * SEQ:][:SEQ + 1])

    def test_raw_tokens_as_tensors_are_refused(self):
        with self.assertRaises(ValueError) as ctx:
            self.loader(widen=False)
        self.assertIn("as_numpy", str(ctx.exception))

    def test_resume_on_another_world_size(self):
        # Two ranks consume 4 batches each (32 of 104 samples), then the job restarts on
        # three ranks: together they read the other 72, each exactly once.
        first = [self.loader(world_size=2, rank=r, seed=5) for r in range(2)]
        before = []
        states = []
        for loader in first:
            it = iter(loader)
            for _ in range(4):
                before += next(it)[2].tolist()
            states.append(loader.state_dict())
            del it
        self.assertEqual(states[0], states[1])
        self.assertEqual(states[0]["consumed"], 32)
        after = []
        for r in range(3):
            loader = self.loader(world_size=3, rank=r, seed=5)
            loader.load_state_dict(states[0])
            after += [i for _, _, idx in loader for i in idx.tolist()]
        self.assertEqual(len(before), 32)
        self.assertEqual(len(after), 72)
        self.assertEqual(sorted(before + after), list(range(104)))

    def test_token_set_from_a_folder_or_a_list(self):
        # Three files of 3, 2 and 4 windows: 9 windows, none straddling two files.
        folder = os.path.join(self.tmp.path, "corpus")
        os.makedirs(folder, exist_ok=True)
        files = [os.path.join(folder, f"train_{k:03d}.bin") for k in range(3)]
        parts = [make_tokens(f, n * SEQ + 1, seed=k) for k, (f, n) in enumerate(zip(files, (3, 2, 4)))]
        windows = [p[i * SEQ:(i + 1) * SEQ + 1] for p, n in zip(parts, (3, 2, 4)) for i in range(n)]
        for path in (folder, files, [files[0], folder + "/train_001.bin", files[2]]):
            loader = stoker.Loader.tokens(path, seq_len=SEQ, batch_size=2, world_size=1, rank=0,
                                          return_indices=True)
            seen = []
            for data, _, indices in loader:
                for row, i in zip(data.numpy(), indices.tolist()):
                    np.testing.assert_array_equal(row, windows[i].astype(np.int64))
                seen += indices.tolist()
            self.assertEqual(sorted(seen), list(range(9)))

    def test_npy_token_sets_keep_one_type(self):
        folder = os.path.join(self.tmp.path, "npy")
        os.makedirs(folder, exist_ok=True)
        np.save(os.path.join(folder, "a.npy"), np.arange(3 * SEQ + 1, dtype=np.uint32))
        loader = stoker.Loader.tokens(folder, seq_len=SEQ, batch_size=1, world_size=1, rank=0)
        self.assertEqual(len(loader), 3)
        np.save(os.path.join(folder, "b.npy"), np.arange(3 * SEQ + 1, dtype=np.uint16))
        with self.assertRaises(stoker.Error) as ctx:
            stoker.Loader.tokens(folder, seq_len=SEQ, world_size=1, rank=0)
        self.assertIn("b.npy: holds uint16 tokens", str(ctx.exception))

    def test_state_dict_errors(self):
        loader = self.loader()
        with self.assertRaises(TypeError):
            loader.load_state_dict("nope")
        with self.assertRaises(ValueError):
            loader.load_state_dict({"sampler": "garbage"})
        other = self.loader(self.path32, dtype="uint32").state_dict()
        with self.assertRaises(stoker.Error):  # another dataset: refused, names it
            loader.load_state_dict(other)


if __name__ == "__main__":
    unittest.main()
