#include "dataset.hpp"

#include <filesystem>

#include "stoker/common/error.hpp"
#include "stoker/distributed/shared_listing.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/sources/image_source.hpp"
#include "stoker/sources/token_source.hpp"
#include "stoker/transforms/copy_transform.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace stoker::train {

Dataset open_dataset(const TrainOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (o.data.empty() || !fs::exists(o.data, ec)) {
    throw Error("--data " + o.data, "no such file or folder",
                "give an image folder (one subfolder per class) or a token file");
  }
  std::string kind = o.kind;
  if (kind == "auto") kind = fs::is_directory(o.data, ec) ? "images" : "tokens";
  Dataset d;
  if (kind == "images") {
    // Listed by rank 0 alone under MPI, the others take its index (issue 36).
    auto src = open_image_folder(o.data, detect_world().world_size, /*agree=*/true);
    ImageTransformOptions t;
    t.train = true;
    t.size = o.image_size;
    t.dtype = DType::F32;
    t.layout = Layout::CHW;
    d.source = src;
    d.transform = make_image_transform(t);
    d.inputs = 3 * o.image_size * o.image_size;
    d.classes = static_cast<int>(src->classes().size());
    d.describe = src->describe() + "; random-resized crops " + std::to_string(o.image_size) + "x" +
                 std::to_string(o.image_size) + " f32";
    if (d.classes < 2) {
      throw Error("--data " + o.data, "has " + std::to_string(d.classes) + " class folder(s)",
                  "a classifier needs at least 2 class subfolders");
    }
  } else if (kind == "tokens") {
    if (o.token_dtype != "uint16" && o.token_dtype != "uint32") {
      throw Error("--token-dtype " + o.token_dtype, "is not uint16 or uint32");
    }
    d.u32 = o.token_dtype == "uint32";
    auto src = std::make_shared<TokenFileSource>(o.data, static_cast<uint64_t>(o.seq_len),
                                                 d.u32 ? DType::U32 : DType::U16);
    d.source = src;
    d.transform = std::make_shared<CopyTransform>(src->spec());
    d.tokens = true;
    d.seq_len = o.seq_len;
    d.inputs = o.buckets;
    d.classes = o.classes;
    d.describe = src->describe() + "; windows of " + std::to_string(o.seq_len) +
                 " -> next token mod " + std::to_string(o.classes);
  } else {
    throw Error("--kind " + kind, "is not images, tokens or auto");
  }
  return d;
}

}  // namespace stoker::train
