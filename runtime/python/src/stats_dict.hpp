// LoaderStats as a plain Python dict (nanoseconds and bytes as ints, lists of dicts).
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/loader/loader_stats.hpp"

namespace stoker::python {

pybind11::dict stats_dict(const LoaderStats& s);

}  // namespace stoker::python
