"""The real-image corpus's fetch (tests/corpus/corpus.py, docs/reliability.md), with a stand-in
`apt-get` that hands out one small package built here, so no network is needed:

- on an empty cache folder (as on a fresh CI machine) every package is unpacked (before:
  `dpkg-deb -x` failed, "failed to create directory", since <cache>/root was not there, and
  python.corpus skipped as if the packages could not be fetched);
- a second fetch reuses the cache and asks apt-get for nothing;
- a package apt-get cannot download is named, exit status 2 (the corpus test then skips).
"""
import os
import subprocess
import sys
import unittest

from testdata import TempDir

CORPUS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus", "corpus.py")
sys.path.insert(0, os.path.dirname(CORPUS_PY))
import corpus  # noqa: E402

FAKE_APT_GET = """#!/bin/sh
# apt-get download PACKAGE: copies the one test package under the name apt-get gives it
[ "$1" = download ] || exit 100
echo "$2" >> "$FAKE_APT_LOG"
[ -n "$FAKE_APT_FAIL" ] && [ "$2" = "$FAKE_APT_FAIL" ] && { echo "E: Unable to locate package $2" >&2; exit 100; }
cp "$FAKE_DEB" "./$2_1.0-1_all.deb"
"""


class CorpusFetch(unittest.TestCase):
    def setUp(self):
        self.tmp = TempDir()
        self.addCleanup(self.tmp.cleanup)
        tree = os.path.join(self.tmp.path, "pkg")
        os.makedirs(os.path.join(tree, "DEBIAN"))
        os.makedirs(os.path.join(tree, "usr", "share", "doc", "x"))
        with open(os.path.join(tree, "DEBIAN", "control"), "w") as f:
            f.write("Package: x\nVersion: 1.0-1\nArchitecture: all\nMaintainer: t <t@t>\n"
                    "Description: a test package\n")
        with open(os.path.join(tree, "usr", "share", "doc", "x", "a.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
        self.deb = os.path.join(self.tmp.path, "x.deb")
        subprocess.run(["dpkg-deb", "--build", "--root-owner-group", tree, self.deb],
                       check=True, capture_output=True)
        bin_dir = os.path.join(self.tmp.path, "bin")
        os.makedirs(bin_dir)
        apt_get = os.path.join(bin_dir, "apt-get")
        with open(apt_get, "w") as f:
            f.write(FAKE_APT_GET)
        os.chmod(apt_get, 0o755)
        self.log = os.path.join(self.tmp.path, "apt.log")
        self.cache = os.path.join(self.tmp.path, "no", "cache", "yet")
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"],
                        STOKER_CORPUS_DIR=self.cache, FAKE_DEB=self.deb, FAKE_APT_LOG=self.log)

    def fetch(self, **env):
        return subprocess.run([sys.executable, CORPUS_PY, "fetch"], env=dict(self.env, **env),
                              capture_output=True, text=True, timeout=120)

    def asked(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().split()

    def test_a_fetch_into_an_empty_cache_unpacks_every_package(self):
        got = self.fetch()
        self.assertEqual(got.returncode, 0, got.stderr)
        self.assertEqual(self.asked(), list(corpus.PACKAGES))
        for package in corpus.PACKAGES:
            unpacked = os.path.join(self.cache, "root", package)
            self.assertTrue(os.path.exists(os.path.join(unpacked, ".unpacked")), package)
            self.assertTrue(os.path.exists(os.path.join(unpacked, "usr/share/doc/x/a.png")))

    def test_a_second_fetch_reuses_the_cache(self):
        self.assertEqual(self.fetch().returncode, 0)
        os.remove(self.log)
        got = self.fetch(FAKE_DEB="/nonexistent")
        self.assertEqual(got.returncode, 0, got.stderr)
        self.assertEqual(self.asked(), [])

    def test_a_package_that_cannot_be_downloaded_is_named(self):
        missing = list(corpus.PACKAGES)[1]
        got = self.fetch(FAKE_APT_FAIL=missing)
        self.assertEqual(got.returncode, 2)
        self.assertIn(f"apt-get download {missing} failed", got.stderr)
        self.assertIn("Unable to locate package", got.stderr)


if __name__ == "__main__":
    unittest.main()
