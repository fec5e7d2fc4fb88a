"""Bad arguments raise TypeError or ValueError naming the argument; a bad dataset raises
an error naming the file."""
import os
import unittest

import stoker
from testdata import make_image_folder, make_tokens, TempDirCase


class Arguments(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.tokens = os.path.join(cls.tmp.path, "tokens.bin")
        make_tokens(cls.tokens, 1000)
        cls.images = os.path.join(cls.tmp.path, "images")
        make_image_folder(cls.images, classes=1, per_class=2)

    def expect(self, error, argument, make):
        with self.assertRaises(error) as ctx:
            make()
        self.assertIn(argument, str(ctx.exception))

    def test_loader_options(self):
        def tokens(**kw):
            kw.setdefault("world_size", 1)
            kw.setdefault("rank", 0)
            return lambda: stoker.Loader.tokens(self.tokens, seq_len=8, **kw)

        cases = [
            (TypeError, "batch_size", tokens(batch_size="8")),
            (TypeError, "batch_size", tokens(batch_size=True)),
            (ValueError, "batch_size", tokens(batch_size=0)),
            (TypeError, "shuffle", tokens(shuffle=1)),
            (ValueError, "seed", tokens(seed=-1)),
            (ValueError, "rank", tokens(world_size=2, rank=2)),
            (ValueError, "world_size", tokens(world_size=0, rank=0)),
            (ValueError, "world_size", tokens(world_size=2, rank=None)),
            (ValueError, "workers", tokens(workers=0)),
            (TypeError, "prefetch", tokens(prefetch=2.5)),
            (ValueError, "on_corrupt", tokens(on_corrupt="ignore")),
            (ValueError, "max_skip_fraction", tokens(max_skip_fraction=1.5)),
            (TypeError, "max_skip_fraction", tokens(max_skip_fraction="1%")),
            (TypeError, "plan", tokens(plan={"workers": 1})),
            (TypeError, "to_device", tokens(to_device=0)),
            (ValueError, "to_device", tokens(to_device="tpu")),
            (TypeError, "seq_len", lambda: stoker.Loader.tokens(self.tokens, seq_len="8")),
            (ValueError, "dtype", lambda: stoker.Loader.tokens(self.tokens, dtype="int8")),
            (ValueError, "path", lambda: stoker.Loader.tokens(self.tokens + ".missing")),
            (TypeError, "path", lambda: stoker.Loader.tokens(42)),
        ]
        for error, argument, make in cases:
            with self.subTest(argument=argument, error=error.__name__):
                self.expect(error, argument, make)

    def test_image_options(self):
        def images(**kw):
            return lambda: stoker.Loader.images(self.images, world_size=1, rank=0, **kw)

        cases = [
            (ValueError, "size", images(size=0)),
            (ValueError, "scale", images(scale=(0.5, 0.1))),
            (ValueError, "scale", images(scale=(0.5, 1.5))),
            (TypeError, "ratio", images(ratio=1.0)),
            (ValueError, "flip_p", images(flip_p=2)),
            (ValueError, "std", images(std=(0.2, 0.0, 0.2))),
            (ValueError, "mean", images(mean=(0.5, 0.5))),
            (ValueError, "dtype", images(dtype="float64")),
            (ValueError, "layout", images(layout="NCHW")),
            (ValueError, "root", lambda: stoker.Loader.images(self.tokens)),
            (ValueError, "shards", lambda: stoker.Loader.images(self.images, shards=["x.tar"])),
            (ValueError, "shards[0]", lambda: stoker.Loader.images(shards=["missing.tar"])),
        ]
        for error, argument, make in cases:
            with self.subTest(argument=argument, error=error.__name__):
                self.expect(error, argument, make)

    def test_bad_dataset_names_the_file(self):
        empty = os.path.join(self.tmp.path, "empty")
        os.makedirs(empty, exist_ok=True)
        self.expect(stoker.Error, empty, lambda: stoker.Loader.images(empty))
        short = os.path.join(self.tmp.path, "short.bin")
        with open(short, "wb") as f:
            f.write(b"\x00\x00\x00")  # 3 bytes: not a whole number of uint16 tokens
        self.expect(stoker.Error, short, lambda: stoker.Loader.tokens(short, seq_len=2))

    def test_corrupt_image_is_an_error_or_skipped(self):
        root = os.path.join(self.tmp.path, "corrupt")
        os.makedirs(os.path.join(root, "a"), exist_ok=True)
        with open(os.path.join(root, "a", "bad.jpg"), "wb") as f:
            f.write(b"\xff\xd8\xff\xe0 this is not a jpeg")
        loader = stoker.Loader.images(root, batch_size=1, size=8, world_size=1, rank=0)
        self.expect(stoker.Error, "bad.jpg", lambda: list(loader))
        self.expect(stoker.Error, "on_corrupt='skip'", lambda: list(loader))
        loader = stoker.Loader.images(root, batch_size=1, size=8, world_size=1, rank=0,
                                      on_corrupt="skip")  # every sample bad: 100 % > 1 %
        self.expect(stoker.Error, "max_skip_fraction", lambda: list(loader))
        loader = stoker.Loader.images(root, batch_size=1, size=8, world_size=1, rank=0,
                                      on_corrupt="skip", max_skip_fraction=1.0)
        self.assertEqual([x.shape[0] for x, _ in loader], [0])
        self.assertEqual(loader.stats()["skipped"], 1)
        self.assertEqual(loader.stats()["skipped_files"], [os.path.join(root, "a", "bad.jpg")])


if __name__ == "__main__":
    unittest.main()
