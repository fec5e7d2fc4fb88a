#include "loader_sources.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <set>

#include "options.hpp"
#include "stoker/transforms/copy_transform.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "stoker/sources/record_source.hpp"
#include "stoker/sources/tar_source.hpp"
#include "stoker/sources/token_source.hpp"
#include "stoker/plan/plan.hpp"
#include "token_widen.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

// Tar shards, streamed as `stream` says; when it is None, as the loader's plan (else this
// process's) says or when a shard is compressed (stream_shards).
std::shared_ptr<const Source> shard_source(const py::dict& source, const py::dict& loader) {
  const auto shards = list_tar_shards(py::cast<std::vector<std::string>>(source["shards"]));
  TarShardOptions o;
  o.labels = py::cast<bool>(source["labels"]);
  std::optional<bool> asked;
  if (!source["stream"].is_none()) asked = py::cast<bool>(source["stream"]);
  const bool planned = loader.contains("plan") && !loader["plan"].is_none();
  o.stream =
      stream_shards(shards, asked, planned ? py::cast<const Plan*>(loader["plan"]) : nullptr);
  return std::make_shared<TarShardSource>(shards, o);
}

// Splits the `images` dictionary: `root` (an image folder) or `shards` (tar files, with
// `stream` and `labels`) is the source's, the rest the transform's.
LoaderParts image_parts(const py::dict& source, const py::dict& loader) {
  py::dict transform;
  for (auto item : source) {
    auto key = py::cast<std::string>(item.first);
    if (key != "root" && key != "shards" && key != "stream" && key != "labels") {
      transform[item.first] = item.second;
    }
  }
  LoaderParts parts;
  if (source.contains("shards")) {
    parts.source = shard_source(source, loader);
  } else {
    parts.source = std::make_shared<ImageFolderSource>(py::cast<std::string>(source["root"]));
  }
  parts.transform = make_image_transform(image_options(transform));
  return parts;
}

LoaderParts token_parts(const py::dict& source) {
  auto paths = py::cast<std::vector<std::string>>(source["paths"]);
  auto seq_len = py::cast<uint64_t>(source["seq_len"]);
  std::optional<DType> dtype;  // None: the .npy headers', else uint16
  if (!source["dtype"].is_none()) {
    dtype = dtype_from_name(py::cast<std::string>(source["dtype"]), "dtype");
    if (*dtype != DType::U16 && *dtype != DType::U32)
      throw py::value_error("dtype=" + std::string(numpy_name(*dtype)) +
                            ": a token file holds uint16 or uint32 tokens");
  }
  auto src = std::make_shared<TokenFileSource>(paths, seq_len, dtype);
  const DType type = src->dtype();
  LoaderParts parts;
  parts.source = src;
  if (py::cast<bool>(source["widen"])) {
    parts.transform = std::make_shared<TokenWidenTransform>(type, src->spec().shape[0]);
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
    parts = image_parts(source, loader);
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
