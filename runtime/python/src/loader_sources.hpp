// What a Python Loader is made of: a source and a transform built from the options
// dictionaries of stoker.Loader.images / .tokens / .records, plus the loader's options.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "stoker/loader/loader.hpp"

namespace stoker::python {

struct LoaderParts {
  std::shared_ptr<const Source> source;
  std::shared_ptr<const Transform> transform;
  LoaderOptions options;
};

// The dictionaries hold the caller's arguments as given; each is checked here (arguments.hpp,
// TypeError or ValueError naming it), the loader's first.
// kind "images": source {root, shards (one of them None), stream (None|bool), labels
// (bool)}, plus the image transform's keys (options.hpp).
// kind "tokens": source {path (a file, a folder or a list of them: one set), seq_len,
// dtype (None|"uint16"|"uint32"), widen (bool)}.
// kind "records": source {path, record_bytes, labels_path, dtype, shape (None: the whole
// record, record_bytes / the dtype's size)}.
// A source that cannot be opened raises stoker.Error naming the file.
LoaderParts make_loader_parts(const std::string& kind, const pybind11::dict& source,
                              const pybind11::dict& loader);

}  // namespace stoker::python
