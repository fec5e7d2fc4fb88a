// stoker._stoker: the compiled half of the `stoker` Python package. The package's
// __init__.py re-exports what users need; everything here is an implementation detail.
#include <pybind11/pybind11.h>

#include <cstring>

#include "arguments.hpp"
#include "bindings.hpp"
#include "stoker/common/error.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_stoker, m) {
  m.doc() = "stoker's C++ runtime (use the `stoker` package, not this module)";
  // stoker::Error (a failed sample, a dataset the ranks disagree on, ...) arrives as
  // stoker.Error, a RuntimeError whose message names the input at fault and what to do.
  // A message may name a file whose name is not UTF-8: its bytes show as \xNN (pybind11's
  // own translator would raise a UnicodeDecodeError that names nothing instead).
  static py::exception<stoker::Error> error_type(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const stoker::Error& e) {
      const py::object text = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
          e.what(), static_cast<Py_ssize_t>(std::strlen(e.what())), "backslashreplace"));
      PyErr_SetObject(error_type.ptr(), text.ptr());
    }
  });
  stoker::python::bind_plan(m);
  stoker::python::bind_loader(m);
  stoker::python::bind_transforms(m);
  stoker::python::bind_sampler(m);
  stoker::python::arg::bind(m);  // check_int, check_bool (arguments.hpp)
  // Whether this build of stoker has its CUDA parts (the stoker_cuda library of the C++
  // trainer and the gpu tests). This module links none of them, whatever the build.
#ifdef STOKER_BUILT_WITH_CUDA
  m.attr("built_with_cuda") = true;
#else
  m.attr("built_with_cuda") = false;
#endif
  // Loader(to_device='cuda') page-locks the batch slots through torch's cudart (a Python
  // pinner, py_pinner.cpp) and copies them on a side stream (stoker/_device.py), in every
  // build: it needs only a PyTorch with CUDA.
  m.attr("device_copies") = true;
#ifdef STOKER_HAVE_MPI
  m.attr("built_with_mpi") = true;
#else
  m.attr("built_with_mpi") = false;
#endif
}
