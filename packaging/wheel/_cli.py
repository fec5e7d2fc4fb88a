"""The `stoker` command from the wheel: the console entry point (and `python3 -m stoker`) runs
the C++ command bundled in the package (stoker/_bin/stoker). It is the same binary the
stoker .deb installs; its rpath finds the libraries bundled in stoker.libs/, so it runs in an
image that has none of them. Written only into the wheel (scripts/wheel.py), not the .debs."""
import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "stoker")
    try:
        os.execv(binary, ["stoker"] + sys.argv[1:])  # replaces Python: exit code and signals pass
    except OSError as e:
        sys.exit(f"stoker: cannot run the bundled command {binary}: {e.strerror}")


if __name__ == "__main__":
    main()
