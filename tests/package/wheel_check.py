#!/usr/bin/python3
"""The wheel as a file (ctest package.wheel_contents): scripts/wheel.py's output in DIR.

    wheel_check.py DIR [FLOOR]

FLOOR: the newest glibc the wheel may need (default 2.31: the bullseye sysroot's). Checks that:
- its name is stoker-VERSION-py3-none-manylinux_2_Y_x86_64.whl (pure Python over its C
  library stoker/libstoker.so: no CPython extension), and the WHEEL file's Tag says the same;
- the platform tag is true and computed, never claimed: Y is the newest GLIBC_2.Y any ELF file
  in the wheel requires, and Y <= FLOOR's: no file needs a newer glibc (each file's newest is
  printed);
- only glibc and libgcc_s.so.1 are left outside (PEP 600's core and the manylinux policies'
  list), libgcc_s with GCC_ versions the manylinux2014 policy allows (GCC 4.8's);
- nothing bundles or needs libstdc++ (static and hidden in libstoker.so and the command, which
  export no libstdc++ symbol; libstoker.so exports stoker_* only), MPI or libgcc_s;
- every RECORD line's sha256 and size match the file, and every file is in RECORD;
- stoker/_bin/stoker is executable in the zip, and the console entry point names stoker._cli;
- every bundled library (stoker.libs/) is named in METADATA with its Debian package and
  version and has that package's copyright file in the .dist-info (a License-File line),
  every common license text those files cite is there too, and stoker's own LICENSE is.
Exit 77 when the wheel is missing (package.wheel did not make one) or objdump is."""
import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

OUTSIDE = re.compile(r"^(ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt|util|resolv|nsl)"
                     r"\.so\.\d+|libgcc_s\.so\.1)$")
NEVER_BUNDLED = re.compile(r"^lib(stdc\+\+|gcc_s|mpi|open-rte|open-pal|pmix)-")
# libgcc_s's versions in auditwheel's manylinux2014 policy (x86_64).
GCC_ALLOWED = {"3.0", "3.3", "3.3.1", "3.4", "3.4.2", "3.4.4", "4.0.0", "4.2.0", "4.3.0",
               "4.7.0", "4.8.0"}
LIBSTDCXX_EXPORT = re.compile(r" (_ZNSt|_ZNKSt|_ZSt|_ZTVSt|_ZTISt|__cxa_|__gxx_)")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}")


def check_record(z, names, di):
    """RECORD: every file listed once, hashes and sizes right."""
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
        check(digest == "sha256=" + b64 and size == str(len(data)),
              f"RECORD's hash or size of {path} is wrong")


def check_licenses(z, names, di, libs):
    """stoker's LICENSE, and per bundled library its package, version and copyright file."""
    meta = z.read(f"{di}/METADATA").decode()
    check(f"{di}/LICENSE" in names and "License-File: LICENSE" in meta,
          "stoker's LICENSE is missing")
    for lib in libs:
        soname = os.path.basename(lib)
        line = next((l for l in meta.splitlines() if l.startswith(f"- {soname} ")), None)
        check(line is not None and re.search(r"\) from \S+ \S+: ", line) is not None,
              f"METADATA does not list {soname} with its Debian package and version")
        if line:
            lic = line.rsplit(": ", 1)[1]
            check(f"{di}/{lic}" in names and z.read(f"{di}/{lic}").strip() != b"",
                  f"{soname}'s license {lic} is not in the wheel")
            check(f"License-File: {lic}" in meta, f"no License-File line for {lic}")
            cited = set(re.findall(r"/usr/share/common-licenses/([\w+.-]*\w)",
                                   z.read(f"{di}/{lic}").decode(errors="replace")))
            for text in sorted(cited):
                check(f"{di}/licenses/common-licenses/{text}" in names,
                      f"{lic} cites common-licenses/{text}, which is not in the wheel")


def check_elfs(z, names, libs, floor):
    """Each ELF file's needs: its newest GLIBC (printed), GCC_ versions and what it leaves
    outside; libstdc++ neither needed nor exported. Returns (newest GLIBC, outside)."""
    newest, outside = (0, 0), set()
    bundled = {os.path.basename(l) for l in libs}
    tmp = tempfile.mkdtemp()
    try:
        for n in sorted(names):
            data = z.read(n)
            if not data.startswith(b"\x7fELF"):
                continue
            path = os.path.join(tmp, "elf")
            open(path, "wb").write(data)
            dump = subprocess.run(["objdump", "-p", path], capture_output=True, text=True,
                                  check=True).stdout
            refs = dump.partition("Version References:")[2]
            mine = max([(2, int(v)) for v in re.findall(r"\bGLIBC_2\.(\d+)\b", refs)],
                       default=(2, 0))
            newest = max(newest, mine)
            print(f"{n}: needs GLIBC_2.{mine[1]}")
            check(mine <= floor, f"{n} needs GLIBC_2.{mine[1]}, newer than the floor "
                                 f"{floor[0]}.{floor[1]}")
            gcc = set(re.findall(r"\bGCC_(\d+\.\d+(?:\.\d+)?)\b", refs))
            check(gcc <= GCC_ALLOWED, f"{n} needs libgcc_s's GCC_{sorted(gcc - GCC_ALLOWED)}, "
                                      "beyond the manylinux2014 policy's")
            needed = re.findall(r"NEEDED\s+(\S+)", dump)
            check(not re.search(r"GLIBCXX_|CXXABI_", refs) and
                  not any(l.startswith("libstdc++") for l in needed), f"{n} needs libstdc++")
            outside |= {l for l in needed if l not in bundled}
            exports = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                                     text=True).stdout
            check(not LIBSTDCXX_EXPORT.search(exports), f"{n} exports libstdc++'s symbols")
            if n == "stoker/libstoker.so":
                others = [l.split()[-1] for l in exports.splitlines()
                          if l.split()[-1:] and not l.split()[-1].startswith("stoker_")]
                check(not others, f"libstoker.so exports more than stoker_*: {others[:5]}")
    finally:
        shutil.rmtree(tmp)
    return newest, outside


def main():
    folder = sys.argv[1]
    floor = tuple(int(p) for p in (sys.argv[2] if len(sys.argv) > 2 else "2.31").split("."))
    wheels = [f for f in os.listdir(folder) if f.endswith(".whl")] if os.path.isdir(folder) else []
    if len(wheels) != 1:
        print(f"SKIP: no single wheel in {folder} (package.wheel makes it)")
        return 77
    if shutil.which("objdump") is None or shutil.which("nm") is None:
        print("SKIP: objdump or nm (binutils) is not installed")
        return 77
    name = wheels[0]
    m = re.fullmatch(r"stoker-(\d+\.\d+\.\d+)-(py3)-(none)-(manylinux_2_(\d+)_x86_64)\.whl",
                     name)
    check(m is not None, f"{name}: not stoker-VERSION-py3-none-manylinux_2_Y_x86_64.whl")
    if m is None:
        return 1
    version, pytag, abitag, platform, glibc_minor = m.groups()
    z = zipfile.ZipFile(os.path.join(folder, name))
    names = set(z.namelist())
    di = f"stoker-{version}.dist-info"
    wheel_meta = z.read(f"{di}/WHEEL").decode()
    tag = f"{pytag}-{abitag}-{platform}"
    check(f"Tag: {tag}\n" in wheel_meta, f"WHEEL's Tag is not {tag}")
    check("Root-Is-Purelib: false" in wheel_meta, "WHEEL does not say Root-Is-Purelib: false")
    check("stoker/libstoker.so" in names, "no stoker/libstoker.so")
    check(not any(n.endswith(".so") and "cpython" in n for n in names),
          "a CPython extension in a py3-none wheel")
    check_record(z, names, di)
    check((z.getinfo("stoker/_bin/stoker").external_attr >> 16) & 0o111 == 0o111,
          "stoker/_bin/stoker is not executable in the zip")
    check("stoker = stoker._cli:main" in z.read(f"{di}/entry_points.txt").decode(),
          "no console entry point stoker = stoker._cli:main")

    libs = sorted(n for n in names if n.startswith("stoker.libs/"))
    check(len(libs) > 0, "nothing bundled in stoker.libs/")
    never = [l for l in libs if NEVER_BUNDLED.match(os.path.basename(l))]
    check(not never, f"bundled, and must not be: {never}")
    check_licenses(z, names, di, libs)

    # The platform tag: the newest GLIBC version any ELF file needs, only glibc and
    # libgcc_s outside.
    newest, outside = check_elfs(z, names, libs, floor)
    check(all(OUTSIDE.match(l) for l in outside),
          f"{platform} claimed, but the wheel needs {sorted(outside)} from outside")
    check(newest == (2, int(glibc_minor)),
          f"{platform} claimed; the newest needed is GLIBC_2.{newest[1]}")
    print(f"{name}: {os.path.getsize(os.path.join(folder, name))} bytes, {len(libs)} bundled "
          f"libraries, newest GLIBC_2.{newest[1]} (floor {floor[0]}.{floor[1]}), outside: "
          f"{sorted(outside)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
