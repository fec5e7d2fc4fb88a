// Options dictionaries from the Python side -> the C++ option structs. The conversion is
// the one check of the caller's arguments (arguments.hpp: each error names the argument,
// TypeError or ValueError); stoker/_loader.py passes them unchecked. Unknown keys are
// refused, so the two layers cannot drift apart silently.
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/loader/loader.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker::python {

// The DType of "uint8", "uint16", "uint32", "int64", "float16" or "float32": numpy's names,
// which to_string(DType) (stoker/sources/sample_spec.hpp) gives back.
DType dtype_named(const std::string& name);

// Keys: batch_size, drop_last, shuffle, seed, world_size and rank (both None: detected),
// on_corrupt ("error" or "skip"), max_skip_fraction, workers, prefetch, adaptive,
// max_depth, held_batches, pin_threads, shuffle_buffer (None: the plan's); set by the
// Python layer: plan, agree, pin_main_thread, pinner ((pin, unpin, description):
// py_pinner.hpp; it also sets force_pin).
LoaderOptions loader_options(const pybind11::dict& d);

// Keys: train, size, resize_shorter, scale (min, max), ratio (min, max), flip_p, mean, std,
// dtype, layout ("CHW" or "HWC"), antialias, dct_scaling. Missing keys keep the defaults.
ImageTransformOptions image_options(const pybind11::dict& d);

}  // namespace stoker::python
