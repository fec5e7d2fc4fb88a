#include "loader_sources.hpp"

#include <pybind11/stl.h>

#include <set>

#include "options.hpp"
#include "stoker/loader/copy_transform.hpp"
#include "stoker/loader/image_source.hpp"
#include "stoker/loader/image_transforms.hpp"
#include "stoker/loader/record_source.hpp"
#include "stoker/loader/tar_source.hpp"
#include "stoker/loader/token_source.hpp"
#include "token_widen.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

// Splits the `images` dictionary: `root` (an image folder) or `shards` (tar files) is the
// source's, the rest the transform's.
LoaderParts image_parts(const py::dict& source) {
  py::dict transform;
  for (auto item : source) {
    auto key = py::cast<std::string>(item.first);
    if (key != "root" && key != "shards") transform[item.first] = item.second;
  }
  LoaderParts parts;
  if (source.contains("shards")) {
    parts.source =
        std::make_shared<TarShardSource>(py::cast<std::vector<std::string>>(source["shards"]));
  } else {
    parts.source = std::make_shared<ImageFolderSource>(py::cast<std::string>(source["root"]));
  }
  parts.transform = make_image_transform(image_options(transform));
  return parts;
}

LoaderParts token_parts(const py::dict& source) {
  auto path = py::cast<std::string>(source["path"]);
  auto seq_len = py::cast<uint64_t>(source["seq_len"]);
  DType dtype = dtype_from_name(py::cast<std::string>(source["dtype"]), "dtype");
  if (dtype != DType::U16 && dtype != DType::U32)
    throw py::value_error("dtype=" + std::string(numpy_name(dtype)) +
                          ": a token file holds uint16 or uint32 tokens");
  auto src = std::make_shared<TokenFileSource>(path, seq_len, dtype);
  LoaderParts parts;
  parts.source = src;
  if (py::cast<bool>(source["widen"])) {
    parts.transform = std::make_shared<TokenWidenTransform>(dtype, src->spec().shape[0]);
  } else {
    parts.transform = std::make_shared<CopyTransform>(src->spec());
  }
  return parts;
}

LoaderParts record_parts(const py::dict& source) {
  auto path = py::cast<std::string>(source["path"]);
  auto record_bytes = py::cast<uint64_t>(source["record_bytes"]);
  std::string labels;
  if (!source["labels_path"].is_none()) labels = py::cast<std::string>(source["labels_path"]);
  SampleSpec spec{dtype_from_name(py::cast<std::string>(source["dtype"]), "dtype"),
                  py::cast<std::vector<int64_t>>(source["shape"])};
  auto src = std::make_shared<RecordFileSource>(path, record_bytes, labels, spec);
  LoaderParts parts;
  parts.source = src;
  parts.transform = std::make_shared<CopyTransform>(src->spec());
  return parts;
}

}  // namespace

LoaderParts make_loader_parts(const std::string& kind, const py::dict& source,
                              const py::dict& loader) {
  LoaderParts parts;
  if (kind == "images") {
    parts = image_parts(source);
  } else if (kind == "tokens") {
    parts = token_parts(source);
  } else if (kind == "records") {
    parts = record_parts(source);
  } else {
    throw py::value_error("kind=" + kind + ": expected images, tokens or records");
  }
  parts.options = loader_options(loader);
  return parts;
}

}  // namespace stoker::python
