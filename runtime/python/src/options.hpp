// Options dictionaries from the Python side -> the C++ option structs. The Python layer
// (stoker/_loader.py) checks types and ranges first and names the argument; these
// conversions still refuse unknown keys, so the two layers cannot drift apart silently.
#pragma once

#include <pybind11/pybind11.h>

#include "stoker/transforms/image_transforms.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker::python {

// "uint8", "uint16", "uint32", "int64", "float16", "float32" <-> DType (numpy's names).
DType dtype_from_name(const std::string& name, const char* argument);
const char* numpy_name(DType t);

// Keys: batch_size, drop_last, shuffle, seed, world_size, rank, on_corrupt ("error" or
// "skip"), max_skip_fraction, workers, prefetch, adaptive, max_depth, held_batches,
// pin_threads, plan, shuffle_buffer, agree, pinner ((pin, unpin, description): py_pinner.hpp;
// it also sets force_pin).
LoaderOptions loader_options(const pybind11::dict& d);

// Keys: train, size, resize_shorter, scale (min, max), ratio (min, max), flip_p, mean, std,
// dtype, layout ("CHW" or "HWC"), antialias, dct_scaling. Missing keys keep the defaults.
ImageTransformOptions image_options(const pybind11::dict& d);

}  // namespace stoker::python
