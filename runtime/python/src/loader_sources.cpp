#include "loader_sources.hpp"

#include <pybind11/stl.h>

#include <optional>
#include <set>

#include "arguments.hpp"
#include "options.hpp"
#include "stoker/distributed/shared_listing.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/sources/record_source.hpp"
#include "stoker/sources/tar_source.hpp"
#include "stoker/sources/token_source.hpp"
#include "stoker/transforms/copy_transform.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "token_widen.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

// Tar shards, streamed when `stream` says so; when it is None, when the plan's profile
// streams (Stream=yes) or a shard is compressed (those cannot be read by random access).
std::shared_ptr<const Source> shard_source(const std::vector<std::string>& paths,
                                           std::optional<bool> stream, bool labels,
                                           const LoaderOptions& options) {
  TarShardOptions o;
  o.labels = labels;
  const auto shards = list_tar_shards(paths);
  // Only when the caller did not say: planning loads the machine's topology.
  o.stream = stream_shards(
      shards, stream,
      !stream && (options.plan ? options.plan->stream : plan_for_this_process().plan.stream));
  return std::make_shared<TarShardSource>(shards, o);
}

// The image folder `root`, listed once per job (stoker/distributed/shared_listing.hpp):
// `share` is the Python module's part over torch.distributed (stoker/_listing_share.py):
// ("send", callable) on rank 0, which gets the message for the others as bytes, or
// ("take", bytes) on the others, rank 0's message; None: over MPI, or listed here.
std::shared_ptr<const Source> folder_source(const std::string& root, const py::object& share,
                                            const LoaderOptions& options) {
  if (share.is_none()) return open_image_folder(root, options.world_size, options.agree);
  const auto role = py::cast<std::pair<std::string, py::object>>(share);
  if (role.first == "send") {
    return list_and_share(root,
                          [&](const std::string& message) { role.second(py::bytes(message)); });
  }
  return take_shared_listing(root, py::cast<std::string>(role.second), options.rank);
}

// Splits the `images` dictionary: `root` (an image folder, with the private `_share`) or
// `shards` (tar files, with `stream` and `labels`) is the source's, the rest the
// transform's.
LoaderParts image_parts(const py::dict& source, const LoaderOptions& options) {
  const py::object root = source["root"], shards = source["shards"];
  const py::object stream = source["stream"], labels = source["labels"];
  if (root.is_none() == shards.is_none()) {
    throw py::value_error("root=" + arg::repr(root) + ", shards=" + arg::repr(shards) +
                          ": give exactly one of them");
  }
  std::string folder;
  std::vector<std::string> shard_paths;
  std::optional<bool> streamed;
  bool with_labels = true;
  if (!root.is_none()) {
    if (!stream.is_none() || labels.ptr() != Py_True) {
      throw py::value_error("stream=" + arg::repr(stream) + ", labels=" + arg::repr(labels) +
                            ": these apply to tar shards, not to an image folder");
    }
    folder = arg::path("root", root, arg::PathKind::Folder);
  } else {
    shard_paths = arg::paths("shards", shards, ".tar file or folder");
    if (!stream.is_none()) streamed = arg::boolean("stream", stream);
    with_labels = arg::boolean("labels", labels);
  }
  py::dict transform;
  for (auto item : source) {
    auto key = py::cast<std::string>(item.first);
    if (key != "root" && key != "shards" && key != "stream" && key != "labels" && key != "_share") {
      transform[item.first] = item.second;
    }
  }
  const ImageTransformOptions transform_options = image_options(transform);
  LoaderParts parts;
  if (root.is_none()) {
    parts.source = shard_source(shard_paths, streamed, with_labels, options);
  } else {
    parts.source = folder_source(
        folder, source.contains("_share") ? py::object(source["_share"]) : py::none(), options);
  }
  parts.transform = make_image_transform(transform_options);
  return parts;
}

LoaderParts token_parts(const py::dict& source) {
  const auto paths = arg::paths("path", source["path"], "token file or folder");
  const auto seq_len = arg::integer<uint64_t>("seq_len", source["seq_len"], 1, uint64_t{1} << 31);
  std::optional<DType> dtype;  // None: the .npy headers', else uint16
  if (!source["dtype"].is_none()) {
    dtype = dtype_named(arg::choice("dtype", source["dtype"], {"uint16", "uint32"}));
  }
  const bool widen = arg::boolean("widen", source["widen"]);
  auto src = std::make_shared<TokenFileSource>(paths, seq_len, dtype);
  const DType type = src->dtype();
  LoaderParts parts;
  parts.source = src;
  if (widen) {
    parts.transform = std::make_shared<TokenWidenTransform>(type, src->spec().shape[0]);
  } else {
    parts.transform = std::make_shared<CopyTransform>(src->spec());
  }
  return parts;
}

// One record viewed as `shape` of `dtype`; no shape: the whole record, (record_bytes /
// the dtype's size,).
SampleSpec record_spec(const py::dict& source, uint64_t record_bytes) {
  SampleSpec spec;
  spec.dtype = dtype_named(arg::choice(
      "dtype", source["dtype"], {"uint8", "uint16", "uint32", "int64", "float16", "float32"}));
  py::object shape = source["shape"];
  if (shape.is_none()) shape = py::make_tuple(record_bytes / dtype_size(spec.dtype));
  if (py::isinstance<py::str>(shape) || py::isinstance<py::bytes>(shape) ||
      !py::hasattr(shape, "__iter__")) {
    throw py::type_error("shape must be a sequence of ints, got " + arg::repr(shape));
  }
  for (py::handle d : shape) {
    const std::string name = "shape[" + std::to_string(spec.shape.size()) + "]";
    spec.shape.push_back(arg::integer<int64_t>(name, d, 1));
  }
  return spec;
}

LoaderParts record_parts(const py::dict& source) {
  const auto record_bytes = arg::integer<uint64_t>("record_bytes", source["record_bytes"], 1);
  const SampleSpec spec = record_spec(source, record_bytes);
  const auto path = arg::path("path", source["path"], arg::PathKind::File);
  std::string labels;
  if (!source["labels_path"].is_none()) {
    labels = arg::path("labels_path", source["labels_path"], arg::PathKind::File);
  }
  auto src = std::make_shared<RecordFileSource>(path, record_bytes, labels, spec);
  LoaderParts parts;
  parts.source = src;
  parts.transform = std::make_shared<CopyTransform>(src->spec());
  return parts;
}

}  // namespace

LoaderParts make_loader_parts(const std::string& kind, const py::dict& source,
                              const py::dict& loader) {
  // The loader's arguments first: a bad one is named before any dataset is read.
  LoaderOptions options = loader_options(loader);
  LoaderParts parts;
  if (kind == "images") {
    parts = image_parts(source, options);
  } else if (kind == "tokens") {
    parts = token_parts(source);
  } else if (kind == "records") {
    parts = record_parts(source);
  } else {
    throw py::value_error("kind=" + kind + ": expected images, tokens or records");
  }
  parts.options = std::move(options);
  return parts;
}

}  // namespace stoker::python
