#!/usr/bin/python3
"""Writes the wheel stoker-VERSION-py3-none-PLATFORM.whl from a build folder.

    scripts/wheel.py --build DIR --out DIR

The wheel holds the `stoker` package (the .py files and the C library libstoker.so from
DIR/python/stoker, which they load with ctypes), the `stoker` command (DIR/runtime/stoker, as stoker/_bin/stoker behind the
console entry point stoker = stoker._cli:main) and, as `auditwheel repair` would, every shared
library those two need beyond glibc, so that it installs into an image that has none of them:
- each library is copied into stoker.libs/ under a hashed name (libjpeg-1a2b3c4d.so.62),
  SONAME and every DT_NEEDED naming it rewritten, so that an image's own copy with the same
  SONAME (an older libstdc++.so.6 loaded by torch first) can neither stand in for it nor clash
  with it;
- MPI is not bundled: stoker links no libmpi and loads the image's own Open MPI
  (libmpi.so.40, which HPC-X shares) at run time, only on ranks launched under MPI
  (runtime/src/distributed/mpi_api.hpp). A copied libmpi without its installation's
  components could not start anyway: MPI_Init_thread ended the rank with exit 1.
  A closure that holds libmpi is refused;
- RUNPATH $ORIGIN-relative on the extension, the command and every copied library;
- libstdc++ and libgcc_s are bundled too: images older than Debian 12 lack GLIBCXX_3.4.30,
  and a private renamed copy behaves like linking them statically;
- glibc itself (libc, libm, libpthread, libdl, librt, ld-linux; the manylinux core) is not.
Each bundled library's Debian copyright file goes to the .dist-info's licenses/ folder, with
the common license texts (GPL, LGPL...) those files point to, all named in METADATA.

The platform tag names the newest GLIBC_x.y symbol version any file in the wheel requires
(objdump -p's version references): manylinux_2_y_x86_64 when the only libraries left outside
are glibc's, else linux_x86_64. Built on Debian 12 that is manylinux_2_36: the extension and
the command need GLIBC_2.34, but the bundled libstdc++ and libevent need 2.36 (arc4random) and
libgcc_s 2.35 (_dl_find_object), so no glibc older than 2.36 can load them.
The package holds no CPython extension: it is pure Python over libstoker.so (runtime/capi),
so the wheel is py3-none, for every CPython from 3.9 on (Requires-Python: >=3.9).

Tools: patchelf, objdump/strip (binutils), ldd, dpkg -S. Python stdlib only (no setuptools:
the layout is fixed and the RECORD is simple). Prints the wheel's path.
"""
import argparse
import base64
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

# The libraries every glibc system has (PEP 600's core; the manylinux policies' whitelist
# beyond them (libstdc++, libgcc_s, X11, glib) is bundled anyway, see above).
GLIBC_CORE = re.compile(r"^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt|"
                        r"util|resolv|nsl)\.so\.\d+)$")
# MPI's libraries: never bundled (see above); the image's own are loaded at run time.
MPI_LIBS = re.compile(r"^lib(mpi|open-rte|open-pal|pmix)\.so\.\d+$")
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries dated alike: the same build gives the same bytes


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def needed_closure(elfs):
    """SONAME -> host path of every non-glibc library the given files load, transitively
    (ldd resolves as the loader does, with this machine's search path)."""
    libs = {}
    for elf in elfs:
        for line in run("ldd", elf).splitlines():
            m = re.match(r"\s*(\S+) => (\S+) \(", line)
            if m and not GLIBC_CORE.match(m.group(1)):
                libs[m.group(1)] = os.path.realpath(m.group(2))
            elif "not found" in line:
                sys.exit(f"wheel: {elf} needs {line.split()[0]}, which ldd cannot find")
    return libs


def dt_needed(elf):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", run("readelf", "-d", elf))


def glibc_needs(elf):
    """The GLIBC_x.y versions the file requires (its version references), as (x, y) pairs."""
    return {tuple(int(p) for p in v.split("."))
            for v in re.findall(r"\bGLIBC_(\d+\.\d+(?:\.\d+)?)\b", run("objdump", "-p", elf))}


def hashed_name(soname, path):
    """libfoo.so.1 -> libfoo-<8 hex of the file's sha256>.so.1, as auditwheel names them."""
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()[:8]
    stem, _, rest = soname.partition(".so")
    return f"{stem}-{digest}.so{rest}"


def debian_packages(paths):
    """path -> (Debian package, version) for each library, in one dpkg call (one a file takes
    a second on a busy machine). dpkg records /usr/lib/...; ldd may print /lib/... on a
    merged /usr, so both spellings are asked."""
    ask = {}
    for p in paths:
        for alt in (p, p.replace("/usr/lib/", "/lib/", 1), p.replace("/lib/", "/usr/lib/", 1)):
            ask[alt] = p
    r = subprocess.run(["dpkg", "-S", *ask], capture_output=True, text=True)  # 1: some unowned
    owner = {}
    for line in r.stdout.splitlines():
        pkgs, _, path = line.partition(": ")
        if path in ask and "," not in pkgs:
            owner[ask[path]] = pkgs.split(":")[0]
    missing = sorted(set(paths) - set(owner))
    if missing:
        sys.exit(f"wheel: no Debian package owns {' '.join(missing)}: no license to list")
    versions = dict(line.split(" ", 1) for line in run(
        "dpkg-query", "-W", "-f=${Package} ${Version}\n", *set(owner.values())).splitlines())
    return {p: (pkg, versions[pkg]) for p, pkg in owner.items()}


def platform_tag(files, outside):
    """manylinux_2_Y_x86_64 for the newest GLIBC_2.Y required, when only glibc is left outside."""
    newest = max(v for f in files for v in glibc_needs(f))
    if any(not GLIBC_CORE.match(n) for n in outside) or newest[0] != 2 or newest[1] < 17:
        return "linux_x86_64", newest
    return f"manylinux_{newest[0]}_{newest[1]}_x86_64", newest


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def write_wheel(path, tree, dist_info):
    """Zips tree (the install layout) into path, RECORD last, with each file's mode kept (the
    bundled command must stay executable: pip restores the x bit from the zip entry)."""
    records = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        names = sorted(os.path.relpath(os.path.join(d, f), tree)
                       for d, _, fs in os.walk(tree) for f in fs)
        for name in names:
            data = open(os.path.join(tree, name), "rb").read()
            info = zipfile.ZipInfo(name, FIXED_TIME)
            mode = os.stat(os.path.join(tree, name)).st_mode & 0o777
            info.external_attr = (mode | 0o100000) << 16  # a regular file, with its mode
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            records.append(record_line(name, data))
        record = f"{dist_info}/RECORD"
        records.append(f"{record},,")
        info = zipfile.ZipInfo(record, FIXED_TIME)
        info.external_attr = 0o100644 << 16
        z.writestr(info, "\n".join(records) + "\n", zipfile.ZIP_DEFLATED)


def metadata(version, bundled, common):
    lines = [
        "Metadata-Version: 2.1", "Name: stoker", f"Version: {version}",
        "Summary: input pipelines sized and placed for the CPUs, GPU and memory Slurm granted",
        "License: Apache-2.0 (stoker); the bundled libraries under their own licenses",
        "Requires-Python: >=3.9",
        "Provides-Extra: loader", 'Requires-Dist: numpy; extra == "loader"',
        "License-File: LICENSE",
    ]
    lines += [f"License-File: licenses/{pkg}/copyright" for pkg in sorted({b[2] for b in bundled})]
    lines += [f"License-File: licenses/common-licenses/{name}" for name in common]
    body = [
        "", "stoker's Python module and its `stoker` command, with the shared libraries they",
        "link (beside glibc) bundled in stoker.libs/. Pure Python over its C library: every",
        "CPython from 3.9 on.",
        "", "Bundled libraries (file, Debian package and version, license file; the license",
        "texts their copyright files name are in licenses/common-licenses/):", "",
    ]
    body += [f"- {name} ({soname}) from {pkg} {ver}: licenses/{pkg}/copyright"
             for soname, name, pkg, ver in bundled]
    return "\n".join(lines + body) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    version = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(.+)$",
                        open(f"{build}/CMakeCache.txt").read(), re.M).group(1)
    pkgdir = f"{build}/python/stoker"
    ext = f"{pkgdir}/libstoker.so"
    command = f"{build}/runtime/stoker"
    if not os.path.isfile(ext) or not os.path.isfile(command):
        sys.exit(f"wheel: {build} has no built library or command (build stoker, stoker_python)")

    tmp = tempfile.mkdtemp(prefix="stoker-wheel-")
    try:
        tree = f"{tmp}/tree"
        dist_info = f"stoker-{version}.dist-info"
        os.makedirs(f"{tree}/stoker/_bin")
        os.makedirs(f"{tree}/stoker.libs")
        os.makedirs(f"{tree}/{dist_info}/licenses")
        for f in sorted(glob.glob(f"{pkgdir}/*.py")):
            shutil.copy(f, f"{tree}/stoker/")
        for f in ("_cli.py", "__main__.py"):
            shutil.copy(f"{SRC}/packaging/wheel/{f}", f"{tree}/stoker/")
        own = {ext: f"{tree}/stoker/{os.path.basename(ext)}", command: f"{tree}/stoker/_bin/stoker"}
        libs = needed_closure(list(own))
        mpi = sorted(n for n in libs if MPI_LIBS.match(n))
        if mpi:
            sys.exit(f"wheel: the build links {' '.join(mpi)}: stoker loads MPI at run time "
                     "(runtime/src/distributed/mpi_api.hpp) and the wheel bundles none")
        # Debug info off (the build is RelWithDebInfo: 130 MB of it); symbols stay.
        for src, dst in own.items():
            run("strip", "--strip-debug", "-o", dst, src)
        renamed, bundled = {}, []
        owners = debian_packages(libs.values())
        for soname, path in sorted(libs.items()):
            new = hashed_name(soname, path)
            renamed[soname] = new
            run("strip", "--strip-debug", "-o", f"{tree}/stoker.libs/{new}", path)
            pkg, pkg_version = owners[path]
            os.makedirs(f"{tree}/{dist_info}/licenses/{pkg}", exist_ok=True)
            shutil.copy(f"/usr/share/doc/{pkg}/copyright", f"{tree}/{dist_info}/licenses/{pkg}/")
            bundled.append((soname, new, pkg, pkg_version))
        shutil.copy(f"{SRC}/LICENSE", f"{tree}/{dist_info}/LICENSE")
        # Debian's copyright files name license texts in /usr/share/common-licenses (GPL, LGPL,
        # Apache...) instead of holding them: those texts travel too (the GPL and LGPL ask for
        # their text to go along with the library).
        common = set()
        for f in glob.glob(f"{tree}/{dist_info}/licenses/*/copyright"):
            text = open(f).read()
            common |= set(re.findall(r"/usr/share/common-licenses/([\w+.-]*\w)", text))
        for name in sorted(common):
            if os.path.isfile(f"/usr/share/common-licenses/{name}"):
                os.makedirs(f"{tree}/{dist_info}/licenses/common-licenses", exist_ok=True)
                shutil.copy(f"/usr/share/common-licenses/{name}",
                            f"{tree}/{dist_info}/licenses/common-licenses/")

        # SONAMEs, DT_NEEDED and RUNPATHs: everything resolves from inside the wheel.
        elfs = {f"{tree}/stoker.libs/{n}": "$ORIGIN" for n in renamed.values()}
        elfs[own[ext]] = "$ORIGIN/../stoker.libs"
        elfs[own[command]] = "$ORIGIN/../../stoker.libs"
        # One change per patchelf call: Debian 12's patchelf 0.14 garbles the dynamic strings
        # when --set-soname or --set-rpath come with --replace-needed in the same call.
        for elf, rpath in elfs.items():
            replace = [a for n in dt_needed(elf) if renamed.get(n, n) != n
                       for a in ("--replace-needed", n, renamed[n])]
            if replace:
                run("patchelf", *replace, elf)
            if "/stoker.libs/" in elf:
                run("patchelf", "--set-soname", os.path.basename(elf), elf)
            run("patchelf", "--set-rpath", rpath, elf)
        outside = {n for elf in elfs for n in dt_needed(elf) if n not in renamed.values()}
        tag, newest = platform_tag(list(elfs), outside)

        with open(f"{tree}/{dist_info}/WHEEL", "w") as f:
            f.write(f"Wheel-Version: 1.0\nGenerator: stoker scripts/wheel.py\n"
                    f"Root-Is-Purelib: false\nTag: py3-none-{tag}\n")
        with open(f"{tree}/{dist_info}/METADATA", "w") as f:
            common_dir = f"{tree}/{dist_info}/licenses/common-licenses"
            common = sorted(os.listdir(common_dir)) if os.path.isdir(common_dir) else []
            f.write(metadata(version, bundled, common))
        with open(f"{tree}/{dist_info}/entry_points.txt", "w") as f:
            f.write("[console_scripts]\nstoker = stoker._cli:main\n")
        with open(f"{tree}/{dist_info}/top_level.txt", "w") as f:
            f.write("stoker\n")

        os.makedirs(args.out, exist_ok=True)
        for old in glob.glob(f"{args.out}/stoker-*.whl"):
            os.remove(old)
        whl = os.path.join(os.path.abspath(args.out), f"stoker-{version}-py3-none-{tag}.whl")
        write_wheel(whl, tree, dist_info)
        print(f"wheel: {len(bundled)} libraries bundled; newest glibc symbol version needed: "
              f"GLIBC_{'.'.join(map(str, newest))}; outside the wheel: {' '.join(sorted(outside))}",
              file=sys.stderr)
        print(whl)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
