"""Small real datasets for the Python tests, made in a temporary folder."""
import os
import tempfile

import numpy as np


def make_image_folder(root, classes=3, per_class=8, seed=0, quality=92):
    """root/c<k>/<i>.jpg: smooth random images (gradients plus noise, so that resampling
    differences stay small) of varied sizes and aspect ratios. Returns the list of
    (path, label) in torchvision ImageFolder order."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    items = []
    for c in range(classes):
        folder = os.path.join(root, f"c{c}")
        os.makedirs(folder, exist_ok=True)
        for i in range(per_class):
            h, w = int(rng.integers(40, 140)), int(rng.integers(40, 140))
            y, x = np.mgrid[0:h, 0:w]
            base = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (w + h)], axis=-1)
            noise = rng.normal(0, 12, size=(h, w, 3))
            pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
            path = os.path.join(folder, f"{i:03d}.jpg")
            Image.fromarray(pixels).save(path, quality=quality)
    for c in range(classes):
        for i in range(per_class):
            items.append((os.path.join(root, f"c{c}", f"{i:03d}.jpg"), c))
    return items


def make_tokens(path, count, dtype="uint16", seed=0):
    """A token file of `count` random tokens; returns them as a numpy array."""
    rng = np.random.default_rng(seed)
    high = 65536 if dtype == "uint16" else 1 << 20
    tokens = rng.integers(0, high, size=count).astype(dtype)
    tokens.tofile(path)
    return tokens


class TempDir:
    """A temporary folder for one test class (removed at the end)."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="stoker-py-")
        self.path = self._dir.name

    def cleanup(self):
        self._dir.cleanup()


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def thread_count():
    return len(os.listdir("/proc/self/task"))
