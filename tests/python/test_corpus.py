"""The real-image corpus (tests/corpus/): image files from Debian packages, written by
other people's software, file by file against PIL and torchvision:

- PIL opens it <=> stoker decodes it (a broken file, "PIL refuses" in the manifest, is
  refused by both); for the formats PIL opens and stoker does not read
  (GIF, ICO, BMP, TIFF), stoker's message names the format and the ones it reads;
- stoker's full-resolution RGB equals PIL's Image.open(f).convert('RGB') byte for byte;
- the eval transform (Resize 256 + CenterCrop 224) through stoker.Loader stays within a
  mean |difference| of 1.0 (0-255 units) of torchvision's on the PIL image, with one PNG
  named .JPEG among them (the decoder follows the bytes).

The corpus is fetched once into a cache folder (tests/corpus/corpus.py fetch) and reused;
where the packages cannot be fetched the test is skipped, saying so.
"""
import io
import os
import subprocess
import sys
import unittest

import numpy as np
from PIL import Image

import stoker
from stoker import _stoker
from testdata import TempDir

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus"))
import corpus  # noqa: E402

STOKER_READS = ("JPEG", "PNG", "WEBP")


def require_corpus():
    """Fetches the corpus, or skips the calling test class, saying why it cannot be had."""
    got = subprocess.run([sys.executable, corpus.__file__, "fetch"], capture_output=True,
                         text=True, timeout=1800)
    if got.returncode != 0:
        error = got.stderr.strip() or "fetch failed"
        raise unittest.SkipTest(f"the real-image corpus cannot be fetched: {error}")


class Corpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_corpus()
        cls.files = corpus.manifest()

    def test_every_listed_file_is_there(self):
        missing = [path for path, _ in self.files if not os.path.exists(path)]
        self.assertEqual(missing, [], "re-run tests/corpus/corpus.py manifest")

    def test_pil_opens_it_iff_stoker_decodes_it_with_the_same_rgb(self):
        opened = decoded = refused = 0
        for path, kinds in self.files:
            with self.subTest(file=path, kinds=kinds):
                with open(path, "rb") as f:
                    data = f.read()
                if kinds[0] == corpus.PIL_REFUSES:  # a broken file: both refuse it
                    with self.assertRaises(Exception):
                        with Image.open(path) as image:
                            image.convert("RGB")
                    with self.assertRaises(stoker.Error):
                        _stoker.decode_image(data)
                    refused += 1
                    continue
                with Image.open(path) as image:
                    fmt = image.format
                    want = np.asarray(image.convert("RGB"))
                opened += 1
                if fmt not in STOKER_READS:
                    with self.assertRaises(stoker.Error) as ctx:
                        _stoker.decode_image(data)
                    self.assertIn(f"a{'n' if fmt[0] in 'AEIO' else ''} {fmt} image: stoker "
                                  "decodes JPEG, PNG and WebP only", str(ctx.exception))
                    continue
                got = _stoker.decode_image(data)
                decoded += 1
                self.assertEqual(got.shape, want.shape)
                differ = int((got != want).sum())
                self.assertEqual(differ, 0, f"{differ} samples differ from PIL's")
        print(f"\ncorpus: {len(self.files)} files, PIL opens {opened}, stoker decodes "
              f"{decoded} (the others: formats stoker does not read), both refuse {refused}",
              file=sys.stderr)

    def test_a_stray_marker_inside_the_scan_is_decoded_iff_pil_decodes_it(self):
        """Files PIL decodes were refused as truncated when a stray APPn or COM
        marker sat inside the entropy-coded data (libjpeg then reads past the file's end for
        the end marker, after every row was decoded). Made from the corpus's real JPEGs: the
        marker inserted halfway into the scan data, then PIL and stoker compared."""
        checked = 0
        for path, kinds in self.files:
            if kinds[0] != "JPEG":
                continue
            with open(path, "rb") as f:
                data = f.read()
            sos = data.find(b"\xff\xda")
            at = sos + (len(data) - sos) // 2
            while data[at - 1] == 0xFF:  # not inside a stuffed 0xff 0x00 or a marker
                at += 1
            for marker in (b"\xff\xe1", b"\xff\xfe"):
                damaged = data[:at] + marker + data[at:]
                with self.subTest(file=path, marker=marker.hex()):
                    try:
                        with Image.open(io.BytesIO(damaged)) as image:
                            want = np.asarray(image.convert("RGB"))
                    except Exception:  # noqa: BLE001 - PIL refuses it: so must stoker
                        with self.assertRaises(stoker.Error):
                            _stoker.decode_image(damaged)
                        continue
                    got = _stoker.decode_image(damaged)
                    self.assertEqual(got.shape, want.shape)
                    self.assertEqual(int((got != want).sum()), 0, "samples differ from PIL's")
                    checked += 1
        self.assertGreater(checked, 0, "no damaged JPEG that PIL decodes was made")

    def test_eval_transform_is_torchvisions(self):
        import torchvision.transforms as T

        tmp = TempDir()
        self.addCleanup(tmp.cleanup)
        folder = os.path.join(tmp.path, "c0")
        os.makedirs(folder)
        names = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}
        paths, renamed = [], False
        for path, kinds in self.files:
            if kinds[0] not in STOKER_READS:
                continue
            ext = names[kinds[0]]
            if kinds[0] == "PNG" and not renamed:  # ImageNet holds a PNG named .JPEG
                ext, renamed = "JPEG", True
            link = os.path.join(folder, f"{len(paths):04d}.{ext}")
            os.symlink(path, link)
            paths.append(path)
        reference = T.Compose([T.Resize(256), T.CenterCrop(224)])
        loader = stoker.Loader.images(tmp.path, batch_size=1, size=224, resize_shorter=256,
                                      train=False, dtype="uint8", layout="HWC",
                                      dct_scaling=False, shuffle=False, world_size=1, rank=0)
        for path, (batch, _) in zip(paths, loader):
            with self.subTest(file=path):
                with Image.open(path) as image:
                    want = np.asarray(reference(image.convert("RGB")), dtype=np.float64)
                got = batch[0].numpy().astype(np.float64)
                self.assertLess(float(np.abs(got - want).mean()), 1.0)
        self.assertEqual(loader.stats()["samples"], len(paths))


class WebpAgainstPil(unittest.TestCase):
    """The WebP kinds the corpus lacks (lossless, alpha), written by PIL's libwebp."""

    def test_lossless_and_alpha_webp_equal_pils_rgb(self):
        rng = np.random.default_rng(1)
        rgba = rng.integers(0, 256, size=(37, 53, 4), dtype=np.uint8)
        for name, image, options in (
                ("lossy_rgb", Image.fromarray(rgba[..., :3]), {"quality": 80}),
                ("lossy_alpha", Image.fromarray(rgba, "RGBA"), {"quality": 80}),
                ("lossless_alpha", Image.fromarray(rgba, "RGBA"), {"lossless": True}),
                ("lossless_exact", Image.fromarray(rgba, "RGBA"),
                 {"lossless": True, "exact": True})):
            with self.subTest(kind=name):
                out = io.BytesIO()
                image.save(out, "WEBP", **options)
                data = out.getvalue()
                want = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
                np.testing.assert_array_equal(_stoker.decode_image(data), want)


if __name__ == "__main__":
    unittest.main()
