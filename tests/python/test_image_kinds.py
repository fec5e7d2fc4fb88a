"""Every JPEG and PNG kind real datasets hold decodes to the pixels of PIL's
Image.open(f).convert('RGB'), the pixels torchvision's ImageFolder sees: exactly for PNG,
within a mean of 1.5 levels for JPEG (where IDCT rounding may differ; with Debian's one
libjpeg-turbo it is exact too). Also: the decoder follows the content, not the name."""
import os
import shutil
import unittest

import numpy as np
from PIL import Image

from stoker import _stoker
from testdata import TempDirCase, write_image_kinds


def pil_rgb(path):
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def stoker_rgb(path):
    with open(path, "rb") as f:
        return _stoker.decode_image(f.read())


class ImageKinds(TempDirCase, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.kinds = write_image_kinds(os.path.join(cls.tmp.path, "kinds"))

    def test_every_kind_is_made(self):
        modes = {name: Image.open(path).mode for name, path in self.kinds.items()}
        self.assertEqual(modes["jpeg_cmyk"], "CMYK")
        self.assertEqual(modes["ycck"], "CMYK")
        self.assertEqual(Image.open(self.kinds["ycck"]).info.get("adobe_transform"), 2)
        self.assertEqual(modes["jpeg_grey"], "L")
        self.assertEqual(modes["png_grey16"], "I")
        self.assertEqual(modes["png_palette_trns"], "P")
        self.assertIn("transparency", Image.open(self.kinds["png_palette_trns"]).info)
        self.assertEqual(Image.open(self.kinds["interlaced_rgb"]).info.get("interlace"), 1)
        self.assertEqual(len(self.kinds), 24)

    def test_decoded_rgb_equals_pils(self):
        for name, path in sorted(self.kinds.items()):
            with self.subTest(kind=name):
                want, got = pil_rgb(path), stoker_rgb(path)
                self.assertEqual(got.dtype, np.uint8)
                self.assertEqual(got.shape, want.shape)
                diff = np.abs(got.astype(np.int32) - want.astype(np.int32))
                if path.endswith(".png"):
                    self.assertEqual(int(diff.max()), 0, f"{name}: {int((diff > 0).sum())} "
                                     "samples differ")
                else:
                    self.assertLess(float(diff.mean()), 1.5, name)

    def test_content_not_name_decides(self):
        renamed = os.path.join(self.tmp.path, "really_a_png.JPEG")
        shutil.copy(self.kinds["png_rgba"], renamed)
        np.testing.assert_array_equal(stoker_rgb(renamed), pil_rgb(renamed))

    def test_undecodable_bytes_say_why(self):
        import stoker

        for data, words in ((b"", "empty file"), (b"GIF89a\x01\x00", "a GIF image"),
                            (b"plain text", "not a JPEG, PNG or WebP file")):
            with self.subTest(words=words):
                with self.assertRaises(stoker.Error) as ctx:
                    _stoker.decode_image(data)
                self.assertIn(words, str(ctx.exception))


if __name__ == "__main__":
    unittest.main()
