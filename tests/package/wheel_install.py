#!/usr/bin/python3
"""Installs a wheel with Python's stdlib, as pip would for this one wheel (no pip in a minimal
image's python3, nor on a machine without python3-pip):

    wheel_install.py WHEEL SITE_PACKAGES BIN_DIR PYTHON

Unpacks WHEEL into SITE_PACKAGES, keeps each file's mode from the zip entry (the bundled
command must stay executable), and writes BIN_DIR/<name> for each console entry point with
PYTHON on its #! line (PYTHON as the target sees it: in a chroot, the root's own path)."""
import configparser
import os
import sys
import zipfile


def main():
    wheel, site, bindir, python = sys.argv[1:5]
    os.makedirs(site, exist_ok=True)
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            path = z.extract(info, site)
            mode = info.external_attr >> 16 & 0o777
            if mode:
                os.chmod(path, mode)
        dist_info = next(n.split("/")[0] for n in z.namelist() if n.endswith(".dist-info/WHEEL"))
    points = configparser.ConfigParser()
    points.read(os.path.join(site, dist_info, "entry_points.txt"))
    os.makedirs(bindir, exist_ok=True)
    for name, target in points["console_scripts"].items() if "console_scripts" in points else []:
        module, func = target.split(":")
        script = os.path.join(bindir, name)
        with open(script, "w") as f:
            f.write(f"#!{python}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n")
        os.chmod(script, 0o755)
        print(script)


if __name__ == "__main__":
    main()
