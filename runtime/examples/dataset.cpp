#include "dataset.hpp"

#include <filesystem>

#include "stoker/common/error.hpp"

namespace stoker::train {

Dataset open_training_data(const TrainOptions& o, uint64_t world_size, const PlanFor& plan_for) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (o.data.empty() || !fs::exists(o.data, ec)) {
    throw Error("--data " + o.data, "no such file or folder",
                "give an image folder (one subfolder per class) or a token file");
  }
  std::string kind = o.kind;
  if (kind == "auto") kind = fs::is_directory(o.data, ec) ? "images" : "tokens";
  Dataset d;
  DatasetSpec spec;
  if (kind == "images") {
    ImageInput in;
    in.is = ImageInput::Is::Folder;
    in.paths = {o.data};
    in.transform.train = true;
    in.transform.size = o.image_size;
    in.transform.dtype = DType::F32;
    in.transform.layout = Layout::CHW;
    spec.input = in;
  } else if (kind == "tokens") {
    if (o.token_dtype != "uint16" && o.token_dtype != "uint32") {
      throw Error("--token-dtype " + o.token_dtype, "is not uint16 or uint32");
    }
    d.u32 = o.token_dtype == "uint32";
    TokenInput in;
    in.paths = {o.data};
    in.seq_len = static_cast<uint64_t>(o.seq_len);
    in.dtype = d.u32 ? DType::U32 : DType::U16;
    spec.input = in;
  } else {
    throw Error("--kind " + kind, "is not images, tokens or auto");
  }
  stoker::Dataset opened = open_dataset(spec, plan_for, world_size, /*agree=*/true);
  d.source = opened.source;
  d.transform = opened.transform;
  if (kind == "images") {
    d.inputs = 3 * o.image_size * o.image_size;
    d.classes = static_cast<int>(opened.classes.size());
    d.describe = d.source->describe() + "; random-resized crops " + std::to_string(o.image_size) +
                 "x" + std::to_string(o.image_size) + " f32";
    if (d.classes < 2) {
      throw Error("--data " + o.data, "has " + std::to_string(d.classes) + " class folder(s)",
                  "a classifier needs at least 2 class subfolders");
    }
  } else {
    d.tokens = true;
    d.seq_len = o.seq_len;
    d.inputs = o.buckets;
    d.classes = o.classes;
    d.describe = d.source->describe() + "; windows of " + std::to_string(o.seq_len) +
                 " -> next token mod " + std::to_string(o.classes);
  }
  return d;
}

}  // namespace stoker::train
