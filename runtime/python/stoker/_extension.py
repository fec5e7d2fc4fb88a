"""Imports the compiled extension stoker._stoker, and says in one line why when it cannot.

Python's own error for an extension built for another CPython is a misleading "cannot import
name '_stoker' from partially initialized module 'stoker' (most likely due to a circular
import)", and for a missing native library only the library's name. Inside a container
image with its own Python, both are what a user meets first (issue 35).
"""
import glob
import importlib
import os
import re
import sys
import sysconfig


def _tag_of(path):
    """"3.11" for _stoker.cpython-311-x86_64-linux-gnu.so; None when the name has no tag."""
    m = re.search(r"\.cpython-(\d)(\d+)", os.path.basename(path))
    return f"{m.group(1)}.{m.group(2)}" if m else None


def load():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return importlib.import_module("._stoker", __package__)
    except ImportError as e:
        this = f"{sys.version_info.major}.{sys.version_info.minor}"
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = sorted(glob.glob(os.path.join(here, "_stoker*.so")))
        mine = [p for p in built if p.endswith(suffix) or _tag_of(p) is None]
        if built and not mine:
            versions = ", ".join(sorted({_tag_of(p) or "?" for p in built}))
            raise ImportError(
                f"stoker: its extension in {here} is built for CPython {versions}, and this is "
                f"CPython {this} ({sys.executable}): install the stoker wheel made for this "
                f"Python, or run the Python it was built for") from None
        if not built:
            raise ImportError(f"stoker: no compiled extension (_stoker*.so) in {here}: "
                              "install stoker from its wheel or package") from None
        todo = ("a native library it needs is missing: install the stoker wheel, which "
                "bundles them, or the Debian package" if "cannot open shared object" in str(e)
                else "reinstall stoker")
        raise ImportError(f"stoker: its extension {os.path.basename(mine[0])} cannot be "
                          f"loaded: {e} ({todo})") from None
