"""Small real datasets for the Python tests, made in a temporary folder."""
import importlib.util
import os
import socket
import struct
import subprocess
import tempfile
import zlib

import numpy as np


def reference_folder():
    """Where scripts/install-deps.sh puts the installed torchvision's reference scripts
    (references/classification; scripts/torchvision-references.sh), whether or not they are
    there."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                          "torchvision-references.sh")
    return subprocess.run(["bash", script, "--path"], capture_output=True, text=True,
                          check=True).stdout.strip()


def reference_module(name):
    """`name` (e.g. "sampler.py") of the installed torchvision's reference scripts, imported:
    from reference_folder(), or from STOKER_TORCHVISION_SOURCE (a source tree); None when
    neither is here."""
    candidates = [os.path.join(reference_folder(), name)]
    source = os.environ.get("STOKER_TORCHVISION_SOURCE")
    if source:
        candidates.append(os.path.join(source, "references", "classification", name))
    for path in candidates:
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("_reference_" + name[:-3], path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


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


def smooth_pixels(h, w, seed=0, channels=3, high=255):
    """Gradients plus noise, h x w x channels, 0..high (uint8, or uint16 past 255)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    ramps = [x / w, y / h, (x + y) / (w + h), 1 - x / w]
    base = np.stack([ramps[c % 4] * high for c in range(channels)], axis=-1)
    pixels = np.clip(base + rng.normal(0, high / 20, size=base.shape), 0, high)
    return pixels.astype(np.uint8 if high <= 255 else np.uint16)


def write_png(path, samples, colour_type, depth=None):
    """A PNG written by hand (PIL cannot write 16-bit RGB, RGBA or grey+alpha): `samples`
    is h x w x channels, uint8 or uint16 (big-endian in the file); with depth 1, 2 or 4 one
    channel of small values, packed here."""
    depth = depth or samples.dtype.itemsize * 8
    h, w = samples.shape[:2]
    rows = samples.astype(">u2" if depth == 16 else np.uint8).reshape(h, -1)
    if depth < 8:
        per = 8 // depth
        rows = np.pad(rows, ((0, 0), (0, -w % per))).reshape(h, -1, per)
        rows = sum((rows[..., k] << (8 - depth * (k + 1))) for k in range(per)).astype(np.uint8)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n"
                + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, colour_type, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def write_libjpeg_kinds(folder):
    """The kinds PIL cannot write (YCCK, restart markers, CMYK without Adobe's marker,
    interlaced PNG), written by libjpeg/libpng through the build's helper. Returns their
    paths by name (file name without extension)."""
    os.makedirs(folder, exist_ok=True)
    subprocess.run([os.environ["STOKER_WRITE_IMAGE_KINDS"], folder], check=True)
    return {os.path.splitext(n)[0]: os.path.join(folder, n) for n in sorted(os.listdir(folder))}


def write_image_kinds(folder, seed=0):
    """One file of every JPEG and PNG kind real datasets hold. Returns {name: path}."""
    from PIL import Image

    os.makedirs(folder, exist_ok=True)
    rgb = Image.fromarray(smooth_pixels(47, 61, seed))
    kinds = {}

    def save(name, image, ext, **options):
        kinds[name] = os.path.join(folder, name + ext)
        image.save(kinds[name], format="JPEG" if ext == ".jpg" else "PNG", **options)

    save("jpeg_420", rgb, ".jpg", quality=90, subsampling=2)
    save("jpeg_422", rgb, ".jpg", quality=90, subsampling=1)
    save("jpeg_444", rgb, ".jpg", quality=90, subsampling=0)
    save("jpeg_progressive", rgb, ".jpg", quality=90, progressive=True)
    save("jpeg_grey", rgb.convert("L"), ".jpg", quality=90)
    save("jpeg_cmyk", rgb.convert("CMYK"), ".jpg", quality=90)  # Adobe-inverted, as PIL writes
    save("png_rgb", rgb, ".png")
    save("png_rgba", rgb.convert("RGBA"), ".png")
    save("png_grey", rgb.convert("L"), ".png")
    save("png_grey_alpha", rgb.convert("LA"), ".png")
    save("png_1bit", rgb.convert("1"), ".png")
    save("png_palette", rgb.convert("P", palette=Image.ADAPTIVE, colors=200), ".png")
    save("png_palette_trns", rgb.convert("P", palette=Image.ADAPTIVE, colors=16), ".png",
         transparency=3)
    grey16 = smooth_pixels(47, 61, seed, channels=1, high=700)[..., 0]
    save("png_grey16", Image.fromarray(grey16.astype(np.int32), mode="I"), ".png")
    for name, channels, colour_type in (("png_rgb16", 3, 2), ("png_rgba16", 4, 6),
                                        ("png_grey_alpha16", 2, 4)):
        kinds[name] = os.path.join(folder, name + ".png")
        write_png(kinds[name], smooth_pixels(47, 61, seed, channels, high=65535), colour_type)
    kinds["png_grey4"] = os.path.join(folder, "png_grey4.png")
    write_png(kinds["png_grey4"], smooth_pixels(47, 61, seed, channels=1, high=15), 0, depth=4)
    kinds.update(write_libjpeg_kinds(os.path.join(folder, "libjpeg")))
    return kinds


def make_tokens(path, count, dtype="uint16", seed=0):
    """A token file of `count` random tokens; returns them as a numpy array."""
    rng = np.random.default_rng(seed)
    high = 65536 if dtype == "uint16" else 1 << 20
    tokens = rng.integers(0, high, size=count).astype(dtype)
    tokens.tofile(path)
    return tokens


def make_records(folder, count, record_bytes, seed=0, label_step=1):
    """records.bin (count random records of record_bytes) and labels.bin (int64, index x
    label_step) in folder; returns (records path, labels path, the records as an array)."""
    path, labels_path = os.path.join(folder, "records.bin"), os.path.join(folder, "labels.bin")
    records = np.random.default_rng(seed).integers(0, 256, size=(count, record_bytes),
                                                   dtype=np.uint8)
    records.tofile(path)
    (np.arange(count, dtype=np.int64) * label_step).tofile(labels_path)
    return path, labels_path, records


def free_port():
    """A TCP port free on the loopback now (for MASTER_PORT)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shared_token_file(path, windows, seq):
    """The token file every rank of a multi-rank check reads: windows * seq + 1 uint16 tokens
    0, 1, 2, ... (mod 50000), written by whichever rank comes first, atomically (a temporary,
    then rename), so that another rank sees all of it or nothing. Returns path."""
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        (np.arange(windows * seq + 1) % 50000).astype(np.uint16).tofile(tmp)
        os.replace(tmp, path)
    return path


class TempDir:
    """A temporary folder for one test class (removed at the end)."""

    def __init__(self):
        self._dir = tempfile.TemporaryDirectory(prefix="stoker-py-")
        self.path = self._dir.name

    def cleanup(self):
        self._dir.cleanup()


class TempDirCase:
    """For test classes (mixed into unittest.TestCase): cls.tmp, a TempDir made when the class
    sets up (its setUpClass calls super().setUpClass()) and removed after its last test, even
    when the rest of its setUpClass fails."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = TempDir()
        cls.addClassCleanup(cls.tmp.cleanup)


class ImageFolderCase(TempDirCase):
    """For test classes over one image folder: cls.root, made by make_image_folder with
    FOLDER's classes and per_class, and cls.items, its (path, label) list."""

    FOLDER = {"classes": 3, "per_class": 8}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()  # makes cls.tmp
        cls.root = os.path.join(cls.tmp.path, "images")
        cls.items = make_image_folder(cls.root, **cls.FOLDER)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def thread_count():
    return len(os.listdir("/proc/self/task"))


def make_slow_images(root, seconds, side=2048):
    """An image folder whose first batch takes at least `seconds` for one worker: one large
    noisy JPEG, decoded at full size (dct_scaling=False), linked N times. Returns
    (loader keyword arguments for Loader.images, the seconds one image takes)."""
    import time

    from PIL import Image

    from stoker import _stoker

    folder = os.path.join(root, "c0")
    os.makedirs(folder, exist_ok=True)
    first = os.path.join(folder, "00000.jpg")
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, size=(side, side, 3), dtype=np.uint8)).save(
        first, quality=95)
    with open(first, "rb") as f:
        data = f.read()
    start = time.monotonic()
    for _ in range(3):
        _stoker.decode_image(data)
    per_image = (time.monotonic() - start) / 3
    count = max(2, int(seconds / per_image) + 1)
    for i in range(1, count):
        os.symlink(first, os.path.join(folder, f"{i:05d}.jpg"))
    options = dict(batch_size=count, size=16, resize_shorter=16, train=False, dtype="uint8",
                   dct_scaling=False, workers=1, world_size=1, rank=0, as_numpy=True)
    return options, per_image


class NoLeftovers:
    """For fault tests (mixed into unittest.TestCase first): each test must end with the
    threads its process began it with. Threads that end by themselves (a loader's workers
    abandoned after an interrupt finish their sample first) get a generous while."""

    def setUp(self):
        super().setUp()
        threads = thread_count()
        self.addCleanup(self._no_threads_left, threads)

    def _no_threads_left(self, threads, patience=30.0):
        import time

        deadline = time.monotonic() + patience
        while thread_count() > threads and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertLessEqual(thread_count(), threads, "the test left threads behind")
