#!/usr/bin/python3
"""The real-image corpus: image files written by other people's software, taken from
Debian packages that ship them (documentation, wallpapers, sample data), for
tests/python/test_corpus.py.

    corpus.py fetch      download the packages (apt-get download) and unpack them
                         (dpkg-deb -x) into the cache folder, once: later runs reuse it
    corpus.py manifest   write manifest.tsv beside this file: the files chosen (at most
                         two of each kind per package) and what each exercises

The cache folder is $STOKER_CORPUS_DIR, else /var/cache/stoker-corpus (outside the
repository; nothing fetched is committed). fetch exits 2, saying why, when a package
cannot be fetched (no network, no apt): the test then skips, saying so.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.tsv")
PER_KIND = 2  # files of one kind per package: enough to cover it, few enough for seconds
# Debian 12 packages that ship images, and what each brings.
PACKAGES = {
    "python-matplotlib-data": "matplotlib's sample data: a 4:2:0 photo, RGBA icons",
    "imagemagick-6-doc": "ImageMagick's manual: grey and RGB JPEGs, 1-bit/grey PNGs, GIF, ICO",
    "python-pil-doc": "Pillow's manual: small grey and palette PNGs",
    "libexiv2-doc": "doxygen output: palette PNGs with tRNS, RGB graphs, grey+alpha",
    "gnome-backgrounds": "GNOME wallpapers: lossy WebP, 4096 x 4096",
    "desktop-base": "Debian's artwork: progressive JPEGs, RGBA PNGs of every icon size",
    "golang-1.19-src": "Go's image tests: 4:2:0/4:2:2/4:4:4/4:1:1, progressive, grey and CMYK "
                       "JPEGs; PngSuite (1-16 bit, interlaced, palette, grey+alpha), GIF",
    "golang-golang-x-image-dev": "golang.org/x/image's tests: lossless, alpha and lossy WebP "
                                 "(with and without the loop filter), BMP, TIFF, PNG",
    "golang-github-disintegration-imaging-dev": "imaging's tests: JPEGs of EXIF orientation "
                                                "2-8, PNG",
    "golang-github-rwcarlsen-goexif-dev": "goexif's samples: JPEGs of EXIF orientation 2-8, "
                                          "EXIF-only files PIL refuses (truncated)",
}
IMAGE_ENDINGS = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".ico", ".bmp", ".tif", ".tiff")


def cache_dir():
    return os.environ.get("STOKER_CORPUS_DIR", "/var/cache/stoker-corpus")


def fetch():
    """Unpacks every package into <cache>/root/<package>; returns an error text or None."""
    root = os.path.join(cache_dir(), "root")
    debs = os.path.join(cache_dir(), "debs")
    for package in PACKAGES:
        done = os.path.join(root, package, ".unpacked")
        if os.path.exists(done):
            continue
        try:
            os.makedirs(debs, exist_ok=True)
            got = subprocess.run(["apt-get", "download", package], cwd=debs, text=True,
                                 capture_output=True)
            if got.returncode != 0:
                return f"apt-get download {package} failed: {got.stderr.strip()[-300:]}"
            deb = sorted(f for f in os.listdir(debs) if f.startswith(package + "_"))[-1]
            # dpkg-deb -x makes the last folder only: on an empty cache <cache>/root is not
            # there yet, and it failed ("failed to create directory").
            os.makedirs(os.path.join(root, package), exist_ok=True)
            got = subprocess.run(["dpkg-deb", "-x", os.path.join(debs, deb),
                                  os.path.join(root, package)], text=True, capture_output=True)
            if got.returncode != 0:
                return f"dpkg-deb -x {deb} failed: {got.stderr.strip()[-300:]}"
        except OSError as e:
            return f"cannot fetch {package}: {e}"
        open(done, "w").close()
    return None


PIL_REFUSES = "PIL refuses"  # the first kind of a file PIL cannot open: stoker must refuse it too


def kinds_of(path):
    """What the file exercises, as PIL sees it: format, mode, and its features; a file PIL
    cannot open or load is [PIL_REFUSES, its error] with size None."""
    from PIL import Image

    try:
        with Image.open(path) as im:
            im.convert("RGB")  # decodes: a file cut short fails here, not in open()
            return features(im, path), im.size
    except Exception as e:  # noqa: BLE001 - whatever PIL raises, it refuses the file
        return [PIL_REFUSES, str(e).replace(path, "FILE").replace(",", ";")], None


def sampling(im):
    """A JPEG's chroma subsampling from its frame header: 4:2:0, 4:1:1, ..., or the factors."""
    factors = [(h, v) for _, h, v, _ in im.layer]
    if len(factors) == 1:
        return "one component"
    plain = "factors " + " ".join(f"{h}x{v}" for h, v in factors)
    if any(f != (1, 1) for f in factors[1:]):
        return plain
    return {(1, 1): "4:4:4", (2, 1): "4:2:2", (2, 2): "4:2:0", (1, 2): "4:4:0", (4, 1): "4:1:1",
            (4, 2): "4:1:0"}.get(factors[0], plain)


def features(im, path):
    with open(path, "rb") as f:
        head = f.read(64)
    kinds = [im.format, "mode " + im.mode]
    if im.format == "JPEG":
        kinds.append("progressive" if im.info.get("progressive") else "baseline")
        kinds.append(sampling(im))
        if im.mode == "RGB" and im.info.get("adobe_transform") == 0:
            kinds.append("stored as RGB (Adobe)")
        if im.mode == "CMYK":
            kinds.append({2: "YCCK"}.get(im.info.get("adobe_transform"), "Adobe")
                         if "adobe" in im.info else "plain")
        orientation = im.getexif().get(274)
        if orientation and orientation != 1:
            kinds.append(f"EXIF orientation {orientation}")
    if im.format == "PNG":
        depth = head[24] if len(head) > 24 else 8
        if depth != 8:
            kinds.append(f"{depth}-bit")
        if im.info.get("interlace"):
            kinds.append("interlaced")
        if "transparency" in im.info:
            kinds.append("tRNS")
    if im.format == "WEBP":
        kinds.append("lossless" if b"VP8L" in head else "lossy")
    side = max(im.size)
    if side > 4000:
        kinds.append("> 4000 px")
    elif side <= 16:
        kinds.append("tiny")
    return kinds


def write_manifest():
    import warnings

    warnings.simplefilter("ignore")  # PIL's notes on palette transparency while it converts
    root = os.path.join(cache_dir(), "root")
    chosen = {}
    for package in PACKAGES:
        for folder, _, files in sorted(os.walk(os.path.join(root, package))):
            for name in sorted(files):
                path = os.path.join(folder, name)
                if not name.lower().endswith(IMAGE_ENDINGS) or os.path.islink(path):
                    continue
                kinds, size = kinds_of(path)
                taken = chosen.setdefault((package, tuple(kinds)), [])
                if len(taken) < PER_KIND:
                    taken.append((os.path.relpath(path, root), size))
    with open(MANIFEST, "w") as out:
        out.write("# file (under <cache>/root)\twidth x height\twhat it exercises "
                  f"('{PIL_REFUSES}': PIL cannot open it, stoker must refuse it)\n")
        for (package, kinds), files in sorted(chosen.items()):
            for rel, size in files:
                shown = f"{size[0]} x {size[1]}" if size else "-"
                out.write(f"{rel}\t{shown}\t{', '.join(kinds)}\n")


def manifest():
    """[(path under the cache, [kinds])] from manifest.tsv."""
    rows = []
    with open(MANIFEST) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            rel, _, kinds = line.rstrip("\n").split("\t")
            rows.append((os.path.join(cache_dir(), "root", rel), kinds.split(", ")))
    return rows


if __name__ == "__main__":
    if sys.argv[1:] == ["fetch"]:
        error = fetch()
        if error:
            print(error, file=sys.stderr)
            sys.exit(2)
    elif sys.argv[1:] == ["manifest"]:
        write_manifest()
    else:
        print(__doc__)
        sys.exit(1)
