#!/usr/bin/python3
"""Writes the wheel stoker-VERSION-py3-none-PLATFORM.whl from a build folder.

    scripts/wheel.py --build DIR --out DIR [--sysroot ROOT]

The wheel holds the `stoker` package (the .py files and the C library libstoker.so from
DIR/python/stoker, which they load with ctypes), the `stoker` command (DIR/runtime/stoker, as
stoker/_bin/stoker behind the console entry point stoker = stoker._cli:main) and, as
`auditwheel repair` would, every shared library those two need beyond glibc, so that it
installs into an image that has none of them:
- the libraries are found by their DT_NEEDED names in ROOT's library folders (--sysroot: the
  bullseye sysroot the build was made against, scripts/sysroot.sh; default /, this machine),
  as the dynamic loader would search them there; nothing is run (ldd cannot run a sysroot's
  files);
- each library is copied into stoker.libs/ under a hashed name (libjpeg-1a2b3c4d.so.62),
  SONAME and every DT_NEEDED naming it rewritten, so that an image's own copy with the same
  SONAME (torchvision's libjpeg, an older libpng) can neither stand in for it nor clash with it;
- RUNPATH $ORIGIN-relative on the library, the command and every copied library;
- glibc itself (libc, libm, libpthread, libdl, librt, ld-linux: PEP 600's core) is not bundled,
  nor libgcc_s.so.1: it is on every manylinux policy's list of libraries a system provides
  (Debian's libgcc-s1 and RHEL's libgcc are installed with glibc, which dlopens it itself for
  pthread_cancel and backtrace), a process with torch has one loaded already, and a second
  copy would be a second unwinder. The GCC_ symbol versions needed from it must be among the
  manylinux2014 policy's (GCC 4.8's), or no manylinux tag is claimed;
- libstdc++: the sysroot build links it statically and hidden (cmake/toolchain-bullseye.cmake),
  so a sysroot build that needs libstdc++.so.6 is refused. The host build links it
  dynamically: that wheel bundles it (a private renamed copy), and needs this machine's glibc;
- MPI is not bundled: stoker links no libmpi and loads the image's own Open MPI
  (libmpi.so.40, which HPC-X shares) at run time, only on ranks launched under MPI
  (runtime/src/distributed/mpi_api.hpp). A copied libmpi without its installation's
  components could not start anyway: MPI_Init_thread ended the rank with exit 1.
  A closure that holds libmpi is refused.
Each bundled library's Debian copyright file (ROOT/usr/share/doc/PACKAGE/copyright, the package
found by `dpkg -S` in ROOT's dpkg database) goes to the .dist-info's licenses/ folder, with the
common license texts (GPL, LGPL...) those files point to (ROOT/usr/share/common-licenses), all
named in METADATA with each library's package and version.

The platform tag names the newest GLIBC_x.y symbol version any file in the wheel requires
(objdump -p's version references), never an older one: manylinux_2_y_x86_64 when only glibc
and libgcc_s are left outside, else linux_x86_64. Built against the bullseye sysroot that is
manylinux_2_30 (libstoker.so's pthread_cond_clockwait and the bundled libudev need
GLIBC_2.30): every glibc from 2.30 on. Built on this Debian 12 machine without the sysroot it
is manylinux_2_36 (the bundled libstdc++ needs arc4random): a wheel for this
machine's own tests, not for shipping.
The package holds no CPython extension: it is pure Python over libstoker.so (runtime/capi),
so the wheel is py3-none, for every CPython from 3.9 on (Requires-Python: >=3.9).

Tools: patchelf, objdump/readelf/strip (binutils), dpkg-query. Python stdlib only (no
setuptools: the layout is fixed and the RECORD is simple). Prints the wheel's path.
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

# What the wheel leaves to the system: glibc (PEP 600's core) and libgcc_s (on every manylinux
# policy's list; see above). Everything else it loads is bundled.
GLIBC_CORE = re.compile(r"^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|lib(c|m|pthread|dl|rt|"
                        r"util|resolv|nsl)\.so\.\d+)$")
LIBGCC_S = "libgcc_s.so.1"
# The GCC_ versions of libgcc_s the manylinux2014 policy allows on x86_64 (auditwheel's
# policy, GCC 4.8's libgcc_s; the later manylinux_2_24 allows the same): what every system
# the tag names is sure to provide.
GCC_ALLOWED = {"3.0", "3.3", "3.3.1", "3.4", "3.4.2", "3.4.4", "4.0.0", "4.2.0", "4.3.0",
               "4.7.0", "4.8.0"}
# MPI's libraries: never bundled (see above); the image's own are loaded at run time.
MPI_LIBS = re.compile(r"^lib(mpi|open-rte|open-pal|pmix)\.so\.\d+$")
# Where the dynamic loader looks by default, under a root (x86-64 Debian and RHEL).
LIB_DIRS = ("lib/x86_64-linux-gnu", "usr/lib/x86_64-linux-gnu", "lib64", "usr/lib64", "lib",
            "usr/lib")
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries dated alike: the same build gives the same bytes


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def left_outside(soname):
    return GLIBC_CORE.match(soname) is not None or soname == LIBGCC_S


def find_library(soname, root, runpath):
    """The file the loader would open for SONAME under ROOT: the needing file's own RUNPATH
    (absolute entries, taken inside ROOT), then the default folders. Its real path, with
    links followed inside ROOT (scripts/sysroot.sh made the sysroot's links relative)."""
    for d in [p.lstrip("/") for p in runpath if p.startswith("/")] + list(LIB_DIRS):
        path = os.path.join(root, d, soname)
        if os.path.isfile(path):
            return os.path.realpath(path)
    return None


def dynamic(elf):
    """The file's DT_NEEDED names and its RUNPATH (or RPATH) folders."""
    text = run("readelf", "-d", elf)
    paths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r\w*path: \[(.+)\]", text)
    return (re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", text),
            [p for m in paths for p in m.split(":")])


def dt_needed(elf):
    return dynamic(elf)[0]


def needed_closure(elfs, root):
    """SONAME -> path under ROOT of every library the given files load, transitively, but
    those left outside; read from each file's DT_NEEDED, nothing is run."""
    libs, todo = {}, list(elfs)
    while todo:
        elf = todo.pop()
        needed, runpath = dynamic(elf)
        for soname in needed:
            if left_outside(soname) or soname in libs:
                continue
            path = find_library(soname, root, runpath)
            if path is None:
                sys.exit(f"wheel: {elf} needs {soname}, which is in none of {root}'s library "
                         f"folders ({', '.join(LIB_DIRS)})")
            libs[soname] = path
            todo.append(path)
    return libs


def needed_versions(elf, prefix):
    """The PREFIX_x.y versions the file requires (its version references): GLIBC, GCC."""
    return set(re.findall(rf"\b{prefix}_(\d+\.\d+(?:\.\d+)?)\b",
                          run("objdump", "-p", elf).partition("Version References:")[2]))


def glibc_needs(elf):
    """The GLIBC_x.y versions the file requires, as (x, y) pairs."""
    return {tuple(int(p) for p in v.split(".")) for v in needed_versions(elf, "GLIBC")}


def hashed_name(soname, path):
    """libfoo.so.1 -> libfoo-<8 hex of the file's sha256>.so.1, as auditwheel names them."""
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()[:8]
    stem, _, rest = soname.partition(".so")
    return f"{stem}-{digest}.so{rest}"


def debian_packages(paths, root):
    """path -> (Debian package, version) for each library, from ROOT's dpkg database, in one
    dpkg-query call (one a file takes a second on a busy machine). dpkg records /usr/lib/...
    or /lib/... as the package put it; on a merged /usr either spelling may be the real path,
    so both are asked."""
    admin = ["--admindir", os.path.join(root, "var/lib/dpkg")]
    ask = {}
    for p in paths:
        inside = "/" + os.path.relpath(p, root)
        for alt in (inside, inside.replace("/usr/lib/", "/lib/", 1),
                    inside.replace("/lib/", "/usr/lib/", 1)):
            ask[alt] = p
    r = subprocess.run(["dpkg-query", *admin, "-S", *ask], capture_output=True, text=True)
    owner = {}  # exit 1: some spelling unowned
    for line in r.stdout.splitlines():
        pkgs, _, path = line.partition(": ")
        if path in ask and "," not in pkgs:
            owner[ask[path]] = pkgs.split(":")[0]
    missing = sorted(set(paths) - set(owner))
    if missing:
        sys.exit(f"wheel: no Debian package in {root}'s dpkg database owns {' '.join(missing)}: "
                 "no license to list")
    versions = dict(line.split(" ", 1) for line in run(
        "dpkg-query", *admin, "-W", "-f=${Package} ${Version}\n",
        *set(owner.values())).splitlines())
    return {p: (pkg, versions[pkg]) for p, pkg in owner.items()}


def platform_tag(files, outside):
    """manylinux_2_Y_x86_64 for the newest GLIBC_2.Y required, when only glibc and libgcc_s
    (with versions the policies allow) are left outside; else linux_x86_64. Also returns the
    newest GLIBC version and the GCC_ versions needed."""
    newest = max(v for f in files for v in glibc_needs(f))
    gcc = set().union(*(needed_versions(f, "GCC") for f in files))
    if (any(not left_outside(n) for n in outside) or not gcc <= GCC_ALLOWED
            or newest[0] != 2 or newest[1] < 17):
        return "linux_x86_64", newest, gcc
    return f"manylinux_{newest[0]}_{newest[1]}_x86_64", newest, gcc


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


def metadata(version, bundled, common, origin):
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
        "link (beside glibc and libgcc_s) bundled in stoker.libs/. Pure Python over its C",
        "library: every CPython from 3.9 on.",
        "", f"Bundled libraries, as built against {origin} (file, Debian package and version,",
        "license file; the license texts their copyright files name are in",
        "licenses/common-licenses/):", "",
    ]
    body += [f"- {name} ({soname}) from {pkg} {ver}: licenses/{pkg}/copyright"
             for soname, name, pkg, ver in bundled]
    return "\n".join(lines + body) + "\n"


def origin_of(root):
    """'Debian 11.11': the release ROOT's base-files name."""
    try:
        return "Debian " + open(os.path.join(root, "etc/debian_version")).read().strip()
    except OSError:
        return f"{root} (no /etc/debian_version)"


def bundle(libs, root, tree, dist_info):
    """Copies each library into stoker.libs/ under its hashed name and its package's copyright
    file, with the common license texts they cite, into the .dist-info. Returns
    ({soname: hashed name}, [(soname, hashed name, package, version)], [common license])."""
    renamed, bundled = {}, []
    owners = debian_packages(libs.values(), root)
    licenses = f"{tree}/{dist_info}/licenses"
    for soname, path in sorted(libs.items()):
        new = hashed_name(soname, path)
        renamed[soname] = new
        run("strip", "--strip-debug", "-o", f"{tree}/stoker.libs/{new}", path)
        pkg, pkg_version = owners[path]
        os.makedirs(f"{licenses}/{pkg}", exist_ok=True)
        shutil.copy(os.path.join(root, f"usr/share/doc/{pkg}/copyright"), f"{licenses}/{pkg}/")
        bundled.append((soname, new, pkg, pkg_version))
    # Debian's copyright files name license texts in /usr/share/common-licenses (GPL, LGPL,
    # Apache...) instead of holding them: those texts travel too (the GPL and LGPL ask for
    # their text to go along with the library).
    cited = set()
    for f in glob.glob(f"{licenses}/*/copyright"):
        cited |= set(re.findall(r"/usr/share/common-licenses/([\w+.-]*\w)", open(f).read()))
    common = []
    for name in sorted(cited):
        text = os.path.join(root, "usr/share/common-licenses", name)
        if os.path.isfile(text):
            os.makedirs(f"{licenses}/common-licenses", exist_ok=True)
            shutil.copy(text, f"{licenses}/common-licenses/")
            common.append(name)
    return renamed, bundled, common


def set_run_paths(elfs, renamed):
    """SONAMEs, DT_NEEDED and RUNPATHs of ELFS ({file: its RUNPATH}): everything resolves
    from inside the wheel. One change per patchelf call: Debian 12's patchelf 0.14 garbles the
    dynamic strings when --set-soname or --set-rpath come with --replace-needed in one call."""
    for elf, rpath in elfs.items():
        replace = [a for n in dt_needed(elf) if renamed.get(n, n) != n
                   for a in ("--replace-needed", n, renamed[n])]
        if replace:
            run("patchelf", *replace, elf)
        if "/stoker.libs/" in elf:
            run("patchelf", "--set-soname", os.path.basename(elf), elf)
        run("patchelf", "--set-rpath", rpath, elf)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sysroot", default="/",
                    help="the root the build was linked against (default: this machine)")
    args = ap.parse_args()
    build, root = os.path.abspath(args.build), os.path.abspath(args.sysroot)
    version = re.search(r"^CMAKE_PROJECT_VERSION:STATIC=(.+)$",
                        open(f"{build}/CMakeCache.txt").read(), re.M).group(1)
    pkgdir = f"{build}/python/stoker"
    ext = f"{pkgdir}/libstoker.so"
    command = f"{build}/runtime/stoker"
    if not os.path.isfile(ext) or not os.path.isfile(command):
        sys.exit(f"wheel: {build} has no built library or command (build stoker, stoker_python)")
    if root != "/" and not os.path.isdir(os.path.join(root, "var/lib/dpkg/info")):
        sys.exit(f"wheel: {root} has no dpkg database (var/lib/dpkg): make it with "
                 "scripts/sysroot.sh")

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
        libs = needed_closure(list(own), root)
        mpi = sorted(n for n in libs if MPI_LIBS.match(n))
        if mpi:
            sys.exit(f"wheel: the build links {' '.join(mpi)}: stoker loads MPI at run time "
                     "(runtime/src/distributed/mpi_api.hpp) and the wheel bundles none")
        if root != "/" and "libstdc++.so.6" in libs:
            sys.exit(f"wheel: {build} needs libstdc++.so.6: a sysroot build links it statically "
                     "and hidden (configure it with cmake/toolchain-bullseye.cmake)")
        # Debug info off (the build is RelWithDebInfo: 130 MB of it); symbols stay.
        for src, dst in own.items():
            run("strip", "--strip-debug", "-o", dst, src)
        renamed, bundled, common = bundle(libs, root, tree, dist_info)
        shutil.copy(f"{SRC}/LICENSE", f"{tree}/{dist_info}/LICENSE")

        elfs = {f"{tree}/stoker.libs/{n}": "$ORIGIN" for n in renamed.values()}
        elfs[own[ext]] = "$ORIGIN/../stoker.libs"
        elfs[own[command]] = "$ORIGIN/../../stoker.libs"
        set_run_paths(elfs, renamed)
        outside = {n for elf in elfs for n in dt_needed(elf) if n not in renamed.values()}
        tag, newest, gcc = platform_tag(list(elfs), outside)

        with open(f"{tree}/{dist_info}/WHEEL", "w") as f:
            f.write(f"Wheel-Version: 1.0\nGenerator: stoker scripts/wheel.py\n"
                    f"Root-Is-Purelib: false\nTag: py3-none-{tag}\n")
        with open(f"{tree}/{dist_info}/METADATA", "w") as f:
            f.write(metadata(version, bundled, common, origin_of(root)))
        with open(f"{tree}/{dist_info}/entry_points.txt", "w") as f:
            f.write("[console_scripts]\nstoker = stoker._cli:main\n")
        with open(f"{tree}/{dist_info}/top_level.txt", "w") as f:
            f.write("stoker\n")

        os.makedirs(args.out, exist_ok=True)
        for old in glob.glob(f"{args.out}/stoker-*.whl"):
            os.remove(old)
        whl = os.path.join(os.path.abspath(args.out), f"stoker-{version}-py3-none-{tag}.whl")
        write_wheel(whl, tree, dist_info)
        print(f"wheel: {len(bundled)} libraries bundled from {origin_of(root)} ({root}); "
              f"newest glibc symbol version needed: GLIBC_{'.'.join(map(str, newest))}; from "
              f"libgcc_s: GCC_{', GCC_'.join(sorted(gcc))}; outside the wheel: "
              f"{' '.join(sorted(outside))}", file=sys.stderr)
        print(whl)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
