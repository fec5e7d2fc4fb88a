"""Importing stoker and planning in-process: a library that is missing, that needs a native
library the image lacks, or that is of another interface version says so in one line (not
"circular import", not a bare OSError), and planning maps no hwloc plugin, GL, OpenCL or GPU
driver library into the training process."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import stoker

# Keep in step with tests/support/mapped_libraries.hpp.
FORBIDDEN = ("libOpenCL.", "libGL.", "libGLX", "libEGL", "libX11.", "libXNVCtrl", "libpciaccess",
             "libcuda.so", "libnvidia-ml", "librocm_smi", "libze_loader")


def forbidden_mapped(maps_text):
    found = set()
    for line in maps_text.splitlines():
        path = line[line.find("/"):] if "/" in line else ""
        name = os.path.basename(path)
        plugin = "/hwloc/hwloc_" in path and "/hwloc/hwloc_xml_libxml" not in path
        if plugin or name.startswith(FORBIDDEN):
            found.add(path)
    return found


def run_python(code, env_changes):
    env = dict(os.environ)
    env.update(env_changes)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)


class PlanningLoadsNoDriverLibrary(unittest.TestCase):
    def test_stoker_plan_in_process_loads_no_gl_opencl_or_gpu_driver(self):
        """The dynamic loader's own log (LD_DEBUG=files) names every library the process
        loaded, also those hwloc unloads again when the plan's topology is freed; the maps
        are read while the process's topology (the pinned main thread's) is alive."""
        code = ("import stoker\n"
                "p = stoker.plan(environ={'CUDA_VISIBLE_DEVICES': '0'}, apply=True)\n"
                "assert p.workers >= 1\n"
                "print(open('/proc/self/maps').read())\n")
        with tempfile.TemporaryDirectory(prefix="stoker-py-") as d:
            log = os.path.join(d, "ld")
            r = run_python(code, {"HWLOC_PLUGINS_BLACKLIST": "", "LD_DEBUG": "files",
                                  "LD_DEBUG_OUTPUT": log})
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(forbidden_mapped(r.stdout), set())
            loaded = set()
            for name in os.listdir(d):
                with open(os.path.join(d, name)) as f:
                    for line in f:
                        if "file=" in line and "dynamically loaded" in line:
                            loaded.add(line.split("file=")[1].split()[0])
            self.assertTrue(any("libstoker" in p for p in loaded), loaded)  # the log works
            self.assertEqual(forbidden_mapped("\n".join(loaded)), set())


class BrokenInstall(unittest.TestCase):
    def copy_package(self, root, library=True):
        """The built package, with or without its library (returns its path in the copy)."""
        src = os.path.dirname(stoker.__file__)
        dst = os.path.join(root, "stoker")
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        lib = os.path.join(dst, "libstoker.so")
        if not library:
            os.remove(lib)
        return lib

    def import_error(self, root):
        r = run_python("import stoker", {"PYTHONPATH": root})
        self.assertNotEqual(r.returncode, 0)
        last = r.stderr.strip().splitlines()[-1]
        self.assertNotIn("circular import", r.stderr)
        self.assertTrue(last.startswith("ImportError: stoker: "), last)
        return last

    def test_a_package_without_its_library_says_so(self):
        with tempfile.TemporaryDirectory(prefix="stoker-py-") as d:
            self.copy_package(d, library=False)
            self.assertIn("no libstoker.so in", self.import_error(d))

    def test_a_library_of_another_interface_version_is_named_with_both(self):
        with tempfile.TemporaryDirectory(prefix="stoker-py-") as d:
            self.copy_package(d)
            native = os.path.join(d, "stoker", "_native.py")
            with open(native) as f:
                text = f.read()
            with open(native, "w") as f:  # as if the .py files came from another release
                f.write(text.replace("\nABI = 1 ", "\nABI = 99 ", 1))
            last = self.import_error(d)
            self.assertIn("is of interface version 1, and this package needs version 99", last)
            self.assertIn("reinstall stoker", last)

    def test_an_older_stokers_extension_left_in_the_folder_is_named_not_used(self):
        # Python prefers an extension module to a .py file of the same name: the pybind11
        # binding of an older stoker, left behind by an install over it, would run instead.
        with tempfile.TemporaryDirectory(prefix="stoker-py-") as d:
            self.copy_package(d)
            old = "_stoker.cpython-311-x86_64-linux-gnu.so"
            shutil.copy(os.path.join(d, "stoker", "libstoker.so"), os.path.join(d, "stoker", old))
            last = self.import_error(d)
            self.assertIn(f"{old} in ", last)
            self.assertIn("is an older stoker's compiled extension", last)

    @unittest.skipUnless(shutil.which("patchelf"), "patchelf is not installed")
    def test_a_missing_native_library_is_named(self):
        with tempfile.TemporaryDirectory(prefix="stoker-py-") as d:
            lib = self.copy_package(d)
            # As in an image without stoker's libraries: the library needs one that is absent.
            subprocess.run(["patchelf", "--add-needed", "libstoker_absent.so.1", lib], check=True)
            last = self.import_error(d)
            self.assertIn("its library libstoker.so cannot be loaded: libstoker_absent.so.1", last)
            self.assertIn("a native library it needs is missing: install the stoker wheel", last)


if __name__ == "__main__":
    unittest.main()
