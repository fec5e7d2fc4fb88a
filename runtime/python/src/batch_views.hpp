// A loader Batch handed to Python without copying: numpy arrays that view the batch slot
// and share one capsule owning the Batch. The slot returns to the loader's pool when the
// last array (or a torch tensor made from one with torch.from_numpy) is freed.
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/loader/loader.hpp"

namespace stoker::python {

// (data, labels, indices, epoch, number): data has shape (samples, *spec.shape) and the
// spec's dtype; labels are int64 and indices uint64, both of shape (samples,).
pybind11::tuple batch_views(Batch batch);

}  // namespace stoker::python
