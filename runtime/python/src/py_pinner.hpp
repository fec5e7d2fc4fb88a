// A HostPinner whose pin and unpin are Python callables. stoker/_loader.py gives it
// torch.cuda.cudart()'s cudaHostRegister and cudaHostUnregister, so the batch arena is
// page-locked by the very CUDA runtime torch loaded: the module links no CUDA of its own
// (no second cudart in the process, no version to match).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "stoker/loader/host_pinner.hpp"

namespace stoker::python {

// `spec` is (pin, unpin, description):
//   pin(ptr: int, size: int)   page-locks the range; None or 0 means done, a nonzero int
//                              is an error code, an exception is a failure with its text
//                              (the loader then runs on pageable memory, the reason in
//                              stats()["notes"]);
//   unpin(ptr: int)            undoes it, once, just before the arena is freed; its result
//                              and exceptions are ignored;
//   description: str           names the pinner in the notes ("cudaHostRegister (cuda:0)").
// pin and unpin run with the GIL taken; unpin may run on a worker thread (the last owner of
// the arena) and does nothing once the interpreter is finalizing or in a forked child.
std::shared_ptr<HostPinner> python_pinner(const pybind11::tuple& spec);

}  // namespace stoker::python
