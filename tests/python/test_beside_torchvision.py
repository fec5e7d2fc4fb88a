"""stoker beside torchvision in one process. torchvision's image extension brings its own
libjpeg, libpng and zlib (PyPI's wheels bundle them; Debian's links the system's), and a
library loaded first can stand in for another's symbols of the same name. Whichever of the two
is imported first, and with torchvision's decoder used before stoker decodes, stoker's images
must be byte-equal to PIL's Image.open(f).convert('RGB') on the real-file corpus
(tests/corpus/). Each order runs in its own process."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
import corpus  # noqa: E402

# Run in a fresh interpreter: the imports in the order given, torchvision's decoder used once,
# then every file stoker reads decoded by both; prints the files that differ and the count.
CHECK = """
import importlib, io, sys
order = sys.argv[1].split(",")
for name in order:
    importlib.import_module(name)
import numpy as np, torch, torchvision.io
from PIL import Image
from stoker import _stoker
paths = sys.argv[2:]
first_jpeg = next(p for p in paths if p.lower().endswith((".jpg", ".jpeg")))
torchvision.io.decode_jpeg(torchvision.io.read_file(first_jpeg))  # its libjpeg, in use
differ, same = [], 0
for path in paths:
    data = open(path, "rb").read()
    with Image.open(io.BytesIO(data)) as image:
        want = np.asarray(image.convert("RGB"))
    got = _stoker.decode_image(data)
    if got.shape == want.shape and np.array_equal(got, want):
        same += 1
    else:
        differ.append(path)
print("same", same, "differ", len(differ), *differ[:5])
"""

STOKER_READS = ("JPEG", "PNG")  # byte-equal to PIL: JPEG within libjpeg's own IDCT, PNG exactly


def torchvision_error():
    try:
        import torchvision.io  # noqa: F401
        return None
    except ImportError as e:
        return str(e)


class BesideTorchvision(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if torchvision_error():
            raise unittest.SkipTest(f"no torchvision here: {torchvision_error()}")
        got = subprocess.run([sys.executable, corpus.__file__, "fetch"], capture_output=True,
                             text=True, timeout=1800)
        if got.returncode != 0:
            raise unittest.SkipTest(f"the real-image corpus cannot be fetched: {got.stderr}")
        cls.paths = [path for path, kinds in corpus.manifest()
                     if kinds[0].split(",")[0] in STOKER_READS and os.path.exists(path)]
        if not cls.paths:
            raise unittest.SkipTest("no JPEG or PNG in the corpus")

    def check(self, order):
        r = subprocess.run([sys.executable, "-c", CHECK, order, *self.paths], capture_output=True,
                           text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        words = r.stdout.split()
        self.assertEqual(words[:4], ["same", str(len(self.paths)), "differ", "0"], r.stdout)

    def test_torchvision_first(self):
        self.check("torchvision,stoker")

    def test_stoker_first(self):
        self.check("stoker,torchvision")


if __name__ == "__main__":
    unittest.main()
