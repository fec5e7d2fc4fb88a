// The pieces of the stoker._stoker extension, each bound in its own file.
#pragma once

#include <pybind11/pybind11.h>

namespace stoker::python {

void bind_plan(pybind11::module_& m);        // Plan, plugin_plan, compute_plan
void bind_loader(pybind11::module_& m);      // _Loader (the C++ Loader + its batches)
void bind_transforms(pybind11::module_& m);  // crop/flip parameters, decode, for references
void bind_sampler(pybind11::module_& m);     // _Sampler, the world, the epoch agreement's pieces

}  // namespace stoker::python
