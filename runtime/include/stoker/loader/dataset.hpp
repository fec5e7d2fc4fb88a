// One owner for opening a dataset. Every front end (stoker.Loader.images/tokens/records
// through the C interface, `stoker bench`, the example trainer) fills a DatasetSpec and
// calls open_dataset (or Loader::open, which plans and opens in one step); none builds a
// Source or a Transform itself. It owns:
//  - folder-or-shards detection (a path that is a shard file, or a folder holding shards,
//    is tar shards; another folder is an image folder);
//  - the once-per-job listing of an image folder: over MPI here (open_image_folder), or
//    through the caller's own transport, which hands in the folder it got (`folder`: the
//    Python layer's torch.distributed store);
//  - the choice of transform (the image pipeline, token widening, a plain copy) and of a
//    batch mixing (MixUp/CutMix, with the folder's class count unless num_classes is given);
//  - the streaming decision, taken from the one plan the loader runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "stoker/plan/plan.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/sources/source.hpp"
#include "stoker/transforms/batch_mix.hpp"
#include "stoker/transforms/image_transforms.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

// Images: an image folder (root/<class>/<image>) or WebDataset-style tar shards.
struct ImageInput {
  enum class Is { Detect, Folder, Shards };
  Is is = Is::Detect;              // Detect: shards when a path is a file or holds shards
  std::vector<std::string> paths;  // a folder; or shard files and folders of them
  std::optional<bool> stream;      // shards: as asked; nullopt: the plan's, or compressed
  bool labels = true;              // shards without label members: false (labels -1)
  ImageTransformOptions transform;
  // The folder as the caller's transport delivered it (listed once per job elsewhere);
  // null: listed here, or shared over MPI.
  std::shared_ptr<const ImageFolderSource> folder;
};

// Token files: windows of seq_len + 1 tokens (token_source.hpp).
struct TokenInput {
  std::vector<std::string> paths;  // files and folders: one set
  uint64_t seq_len = 2048;
  std::optional<DType> dtype;  // nullopt: the .npy headers', else uint16
  bool widen = false;          // int64 windows (PyTorch has no uint16/uint32 tensors)
};

// A file of fixed-size records, viewed as `shape` of `dtype`.
struct RecordInput {
  std::string path;
  uint64_t record_bytes = 0;
  std::string labels_path;  // int64 labels, one per record; "": none
  DType dtype = DType::U8;
  std::vector<int64_t> shape;  // empty: the whole record, (record_bytes / dtype size,)
};

struct DatasetSpec {
  std::variant<ImageInput, TokenInput, RecordInput> input;
  // > 0: only the first samples of the dataset (a quick run: `stoker bench --batches`). A
  // streamed source is read shard by shard and is not cut: its caller stops early instead.
  uint64_t first_samples = 0;
};

struct Dataset {
  std::shared_ptr<const Source> source;
  std::shared_ptr<const Transform> transform;
  std::vector<std::string> classes;  // an image folder's class names, in label order
  // Images with mixup_alpha or cutmix_alpha: the batches' mixing, its classes num_classes
  // or the folder's; else null.
  std::shared_ptr<const BatchMix> mix;
};

// The plan the dataset is opened under, asked for once: as soon as the sample the transform
// writes is known (it sizes the batch the plan is made for), and before a choice that needs
// the plan (whether shards stream). Loader::open plans there; a caller with a plan returns it.
using PlanFor = std::function<const Plan&(const SampleSpec& sample)>;

// Opens `spec` for a loader of `world_size` ranks that checks its ranks (`agree`): an image
// folder is then listed once per job over MPI when the world is MPI's (open_image_folder).
// Throws stoker::Error naming the input (a missing path, no samples, a bad shard, ...).
Dataset open_dataset(const DatasetSpec& spec, const PlanFor& plan_for, uint64_t world_size,
                     bool agree);

}  // namespace stoker
