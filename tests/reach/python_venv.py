"""The wheel in a Debian root, run there by the root's own python3 (tests/reach/python_root.sh
enters the root read-only with bubblewrap; stdlib only, as the root's Python may have nothing
else):

    python_venv.py WHEEL DATA

1. The root holds no stoker of its own: no Debian package named stoker, no `stoker` module for
   its python3, no libstoker or stoker file anywhere on its filesystem.
2. A fresh venv (--system-site-packages: the root's numpy, and torch where Debian has it);
   `pip install --no-index --no-deps WHEEL`, offline: pip must accept the wheel's tag here.
3. In the venv (tests/reach/python_checks.py): import stoker, stoker.plan(), Loader.tokens and
   Loader.images (DATA/images: the build's JPEGs, and PNGs written here) with right labels
   and shapes, every native library loaded from the wheel.
4. The wheel's `stoker` command: `stoker plan`, `stoker plan --json`, `stoker doctor`, and
   `python -m stoker plan`.
5. Where the root has torch (Debian's, bookworm and trixie): stoker.DistributedSampler against
   torch's, a 2-rank gloo job over the loopback (stoker.Loader.images with the listing shared
   through the group's store), and stoker beside torchvision: whichever is imported first,
   stoker's decoded images are byte-equal to PIL's (tests/python/test_beside_torchvision.py's
   check) on the build's JPEGs, the PNGs, the kinds PIL writes here and, when this machine
   has fetched it, the real-file corpus (/mnt/corpus).
Prints one line per check and the figures (venv, pip install, import stoker); exit 1 when a
check failed. Nothing here waits on a clock: the subprocesses' timeouts only bound a hang.
"""
import os
import re
import socket
import statistics
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKS = os.path.join(HERE, "python_checks.py")
VENV = "/tmp/venv"
PY = f"{VENV}/bin/python"
failures = []


def check(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + ("" if ok else f":\n{detail}"), flush=True)
    if not ok:
        failures.append(what)
    return ok


def indented(out):
    return "\n".join("     " + line for line in out.strip().splitlines())


def run(*cmd, timeout=600, env=None):
    """A command's exit status and its output (stdout and stderr together)."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, env=env)
    return r.returncode, r.stdout


def no_stoker_in_root():
    status = open("/var/lib/dpkg/status").read()
    packages = re.findall(r"^Package: (\S*stoker\S*)$", status, re.M)
    check(not packages, "the root has no stoker package installed", packages)
    rc, out = run(sys.executable, "-c", "import importlib.util as u; print(u.find_spec('stoker'))")
    check(out.strip() == "None", "the root's python3 finds no stoker module", out)
    # The root's own files: not what this test mounted (/mnt: bind mounts of the same
    # filesystem, which -xdev would not leave out) nor the kernel's and bubblewrap's.
    mounted = [a for m in ("/mnt", "/tmp", "/proc", "/sys", "/dev", "/run")
               for a in ("-path", m, "-o")][:-1]
    rc, out = run("find", "/", "-xdev", "(", *mounted, ")", "-prune", "-o", "(", "-iname",
                  "*libstoker*", "-o", "-iname", "stoker", "-o", "-iname", "stoker[-_.]*", "-o",
                  "-iname", "*stoker*.deb", ")", "-print")
    check(rc == 0 and out.strip() == "", "no stoker file anywhere in the root", out)


def write_png(path, width, height, rgb):
    """An 8-bit RGB PNG of one colour (stdlib only: the root may have no PIL)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                                  0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def install(wheel):
    t0 = time.monotonic()
    rc, out = run(sys.executable, "-m", "venv", "--system-site-packages", VENV)
    venv_s = time.monotonic() - t0
    if not check(rc == 0, "python3 -m venv --system-site-packages", out):
        return None
    t0 = time.monotonic()
    rc, out = run(PY, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
                  "--disable-pip-version-check", "--quiet", wheel)
    pip_s = time.monotonic() - t0
    if not check(rc == 0, f"pip install {os.path.basename(wheel)} (offline)", out):
        return None
    # import stoker's own cost in fresh processes (the .pyc files pip wrote), the median of 3.
    probe = "import time; t = time.perf_counter(); import stoker; print(time.perf_counter() - t)"
    imports = [float(run(PY, "-c", probe)[1].split()[-1]) for _ in range(3)]
    return venv_s, pip_s, statistics.median(imports)


def command_line():
    rc, out = run(f"{VENV}/bin/stoker", "plan")
    check(rc == 0 and "stoker plan: local rank 0 of 1" in out, "the wheel's `stoker plan`", out)
    rc, out = run(f"{VENV}/bin/stoker", "plan", "--json")
    check(rc == 0 and out.lstrip().startswith("{"), "`stoker plan --json`", out)
    # doctor exits 1 on an error finding about this machine (not the wheel's to pass): it
    # must run and report, not fail to start.
    rc, out = run(f"{VENV}/bin/stoker", "doctor")
    check(rc in (0, 1) and re.search(r"\d+ checks: ", out), f"`stoker doctor` (exit {rc})", out)
    if rc in (0, 1):
        print(indented(out.strip().splitlines()[-1]))
    rc, out = run(PY, "-m", "stoker", "plan")
    check(rc == 0 and "stoker plan: local rank 0 of 1" in out, "`python -m stoker plan`", out)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gloo_job(images):
    port = str(free_port())
    procs = [subprocess.Popen([PY, CHECKS, "job", images, port, str(rank)], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
             for rank in (0, 1)]
    for rank, p in enumerate(procs):
        try:
            out = p.communicate(timeout=300)[0]
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out = p.communicate()[0]
        if check(p.returncode == 0, f"gloo rank {rank} of 2: stoker.Loader.images and "
                                    "DistributedSampler over torch.distributed", out):
            print(indented(out))


# Files on which PIL's own answer changed after Debian 12's Pillow 9.4, left out of the
# comparison where the root's Pillow is 10 or later: stoker follows 9.4 there.
PIL_CHANGED = {
    "invalid-palette.png": "an index past the file's palette: Pillow 9.4 gives its grey ramp "
                           "(i, i, i), as stoker does; Debian 13's Pillow 11.1 gives black",
}


def beside_torchvision(data):
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    from test_beside_torchvision import CHECK, STOKER_READS
    kinds = os.path.join("/tmp", "kinds")
    rc, out = run(PY, CHECKS, "pil_kinds", kinds)
    if check(rc == 0, "PIL writes the image kinds", out):
        print(indented(out))
    paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(f"{data}/images") for f in fs)
    paths += sorted(os.path.join(kinds, f) for f in os.listdir(kinds))
    corpus = "corpus: not fetched on this machine (tests/corpus/corpus.py fetch)"
    if os.path.isdir(os.path.join(os.environ.get("STOKER_CORPUS_DIR", "-"), "root")):
        sys.path.insert(0, os.path.join(HERE, "..", "corpus"))
        import corpus as real
        found = [p for p, kinds_ in real.manifest()
                 if kinds_[0].split(",")[0] in STOKER_READS and os.path.exists(p)]
        corpus = f"corpus: {len(found)} JPEG and PNG files"
        paths += found
    pil = run(PY, "-c", "import PIL; print(PIL.__version__)")[1].strip()
    if int(pil.split(".")[0]) >= 10:
        for p in [p for p in paths if os.path.basename(p) in PIL_CHANGED]:
            print(f"     left out under Pillow {pil}: {p}: {PIL_CHANGED[os.path.basename(p)]}")
            paths.remove(p)
    for order in ("torchvision,stoker", "stoker,torchvision"):
        # stdout alone: PIL warns on stderr about some of the corpus's palettes.
        r = subprocess.run([PY, "-c", CHECK, order, *paths], capture_output=True, text=True,
                           timeout=600)
        words = r.stdout.split()
        check(r.returncode == 0 and words[:4] == ["same", str(len(paths)), "differ", "0"],
              f"{order.replace(',', ' then ')}: {len(paths)} images byte-equal to PIL's "
              f"(Pillow {pil}; {corpus})", (r.stdout + r.stderr)[-3000:])


def main():
    wheel, data = sys.argv[1:3]
    print(f"root: Python {sys.version.split()[0]}, {os.confstr('CS_GNU_LIBC_VERSION')}")
    no_stoker_in_root()
    figures = install(wheel)
    if figures is None:
        return 1
    print(f"figures: venv {figures[0]:.1f} s, pip install {figures[1]:.1f} s, "
          f"import stoker {figures[2] * 1000:.1f} ms (median of 3 fresh processes)")
    for k in range(3):  # a PNG per class beside the build's JPEGs
        write_png(f"{data}/images/class{k}/extra.png", 40, 30, (60 + 80 * k, 120, 200 - 70 * k))
    rc, out = run(PY, CHECKS, "basics", data)
    if check(rc == 0, "import stoker, plan(), Loader.tokens, Loader.images", out):
        print(indented(out))
    command_line()
    rc, out = run(PY, "-c", "import torch, torchvision; print(torch.__version__, "
                            "torchvision.__version__)")
    if rc != 0:
        print(f"no torch here ({out.strip().splitlines()[-1]}): no torch checks")
    else:
        print(f"torch {out.strip()} (Debian's)")
        rc, out = run(PY, CHECKS, "sampler")
        check(rc == 0, "stoker.DistributedSampler is torch's, with torch's order", out)
        gloo_job(f"{data}/images")
        beside_torchvision(data)
    print(f"{len(failures)} check(s) failed" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
