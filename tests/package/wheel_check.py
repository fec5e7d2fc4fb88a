#!/usr/bin/python3
"""The wheel as a file (ctest package.wheel_contents): scripts/wheel.py's output in DIR.

    wheel_check.py DIR

Checks that:
- its name is stoker-VERSION-py3-none-PLATFORM.whl (pure Python over its C library
  stoker/libstoker.so: no CPython extension), and the WHEEL file's Tag says the same;
- the platform tag is true: manylinux_2_Y only when no file needs a GLIBC version newer than
  2.Y and nothing outside glibc is left unbundled; Y is the newest needed (no older claim);
- every RECORD line's sha256 and size match the file, and every file is in RECORD;
- stoker/_bin/stoker is executable in the zip, and the console entry point names stoker._cli;
- every bundled library (stoker.libs/) has a license file in the .dist-info, named by a
  License-File line in METADATA, and stoker's own LICENSE is there.
Exit 77 when the wheel is missing (package.build did not make one) or objdump is."""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

GLIBC_CORE = re.compile(r"^(ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt|util|resolv|nsl)"
                        r"\.so\.\d+)$")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def main():
    folder = sys.argv[1]
    wheels = [f for f in os.listdir(folder) if f.endswith(".whl")] if os.path.isdir(folder) else []
    if len(wheels) != 1:
        print(f"SKIP: no single wheel in {sys.argv[1]} (package.build makes it)")
        return 77
    if shutil.which("objdump") is None:
        print("SKIP: objdump (binutils) is not installed")
        return 77
    name = wheels[0]
    m = re.fullmatch(r"stoker-(\d+\.\d+\.\d+)-(py3)-(none)-"
                     r"(manylinux_2_(\d+)_x86_64|linux_x86_64)\.whl", name)
    check(m is not None, f"{name}: not stoker-VERSION-py3-none-PLATFORM.whl")
    if m is None:
        return 1
    version, pytag, abitag, platform, glibc_minor = m.groups()
    z = zipfile.ZipFile(os.path.join(sys.argv[1], name))
    names = set(z.namelist())
    di = f"stoker-{version}.dist-info"
    wheel_meta = z.read(f"{di}/WHEEL").decode()
    tag = f"{pytag}-{abitag}-{platform}"
    check(f"Tag: {tag}\n" in wheel_meta, f"WHEEL's Tag is not {tag}")
    check("Root-Is-Purelib: false" in wheel_meta, "WHEEL does not say Root-Is-Purelib: false")
    check("stoker/libstoker.so" in names, "no stoker/libstoker.so")
    check(not any(n.endswith(".so") and "cpython" in n for n in names),
          "a CPython extension in a py3-none wheel")

    # RECORD: every file listed once, hashes and sizes right.
    record = {}
    for line in z.read(f"{di}/RECORD").decode().splitlines():
        path, digest, size = line.rsplit(",", 2)
        record[path] = (digest, size)
    check(set(record) == names, f"RECORD and the zip differ: {sorted(set(record) ^ names)}")
    for path, (digest, size) in record.items():
        if path == f"{di}/RECORD":
            check(digest == size == "", "RECORD lists a hash for itself")
            continue
        data = z.read(path)
        b64 = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        want = "sha256=" + b64
        check(digest == want and size == str(len(data)),
              f"RECORD's hash or size of {path} is wrong")

    check((z.getinfo("stoker/_bin/stoker").external_attr >> 16) & 0o111 == 0o111,
          "stoker/_bin/stoker is not executable in the zip")
    check("stoker = stoker._cli:main" in z.read(f"{di}/entry_points.txt").decode(),
          "no console entry point stoker = stoker._cli:main")

    # Licenses: stoker's and one per Debian package a bundled library came from.
    meta = z.read(f"{di}/METADATA").decode()
    libs = sorted(n for n in names if n.startswith("stoker.libs/"))
    check(len(libs) > 0, "nothing bundled in stoker.libs/")
    check(f"{di}/LICENSE" in names and "License-File: LICENSE" in meta,
          "stoker's LICENSE is missing")
    for lib in libs:
        soname = os.path.basename(lib)
        line = next((l for l in meta.splitlines() if l.startswith(f"- {soname} ")), None)
        check(line is not None, f"METADATA does not list {soname}")
        if line:
            lic = line.rsplit(": ", 1)[1]
            check(f"{di}/{lic}" in names and z.read(f"{di}/{lic}").strip() != b"",
                  f"{soname}'s license {lic} is not in the wheel")
            check(f"License-File: {lic}" in meta, f"no License-File line for {lic}")

    # The platform tag: the newest GLIBC version any ELF file needs, nothing else outside.
    tmp = tempfile.mkdtemp()
    try:
        newest, outside = (0, 0), set()
        bundled = {os.path.basename(l) for l in libs}
        for n in names:
            data = z.read(n)
            if not data.startswith(b"\x7fELF"):
                continue
            path = os.path.join(tmp, "elf")
            open(path, "wb").write(data)
            dump = subprocess.run(["objdump", "-p", path], capture_output=True, text=True,
                                  check=True).stdout
            for v in re.findall(r"\bGLIBC_2\.(\d+)\b", dump):
                newest = max(newest, (2, int(v)))
            outside |= {l for l in re.findall(r"NEEDED\s+(\S+)", dump) if l not in bundled}
        check(all(GLIBC_CORE.match(l) for l in outside) or platform == "linux_x86_64",
              f"{platform} claimed, but the wheel needs {sorted(outside)} from outside")
        if glibc_minor is not None:
            check(newest == (2, int(glibc_minor)),
                  f"{platform} claimed; the newest needed is GLIBC_2.{newest[1]}")
        print(f"{name}: {len(libs)} bundled libraries, newest GLIBC_2.{newest[1]}, "
              f"outside: {sorted(outside)}")
    finally:
        shutil.rmtree(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
