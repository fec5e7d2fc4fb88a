#include "stoker/loader/dataset.hpp"

#include <filesystem>

#include "sources/file_read.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/shared_listing.hpp"
#include "stoker/sources/record_source.hpp"
#include "stoker/sources/shard_stream.hpp"
#include "stoker/sources/tar_source.hpp"
#include "stoker/sources/token_source.hpp"
#include "stoker/transforms/copy_transform.hpp"
#include "stoker/transforms/token_widen.hpp"

namespace stoker {

namespace {

// The first `n` samples of a source.
class FirstSamples final : public Source {
 public:
  FirstSamples(std::shared_ptr<const Source> s, uint64_t n) : s_(std::move(s)), n_(n) {}
  uint64_t size() const override { return n_; }
  RawSample read(uint64_t i, std::vector<std::byte>& scratch) const override {
    return s_->read(i, scratch);
  }
  std::string location(uint64_t i) const override { return s_->location(i); }
  uint64_t fingerprint() const override { return s_->fingerprint() ^ (n_ * 0x9e3779b97f4a7c15ULL); }
  std::string describe() const override {
    return s_->describe() + " (first " + std::to_string(n_) + " samples)";
  }
  double bytes_per_sample() const override { return s_->bytes_per_sample(); }

 private:
  std::shared_ptr<const Source> s_;
  uint64_t n_;
};

bool streamed(const Source& source) {
  const auto* shards = dynamic_cast<const ShardStreamSource*>(&source);
  return shards != nullptr && shards->streamed();
}

// Tar shards when there are several paths, one is not a folder, or a folder holds a file
// named like a shard; else an image folder. Listed with folder_files: a dangling link is
// passed over, a link to itself is an Error naming it.
bool holds_shards(const std::vector<std::string>& paths) {
  if (paths.size() != 1) return true;
  std::error_code ec;
  if (!std::filesystem::is_directory(paths.front(), ec)) return true;
  return !folder_files(paths.front(), [](const std::string& name) {
            return is_tar_shard_name(name);
          }).empty();
}

// The batches' mixing: num_classes when given, else the dataset's (a folder's) classes.
std::shared_ptr<const BatchMix> mix_of(const ImageTransformOptions& o, uint64_t classes) {
  return std::make_shared<BatchMix>(o, o.num_classes != 0 ? o.num_classes : classes);
}

Dataset open_images(const ImageInput& in, const PlanFor& plan_for, uint64_t world_size,
                    bool agree) {
  if (in.paths.empty() && !in.folder) throw Error("images", "no folder or shards given");
  const bool mixed = BatchMix::wanted(in.transform);
  if (mixed && !in.labels) {
    throw Error("labels=False",
                "mixup_alpha and cutmix_alpha mix one-hot targets, and shards without labels "
                "give none",
                "read the shards with labels, or leave mixup_alpha and cutmix_alpha at 0");
  }
  Dataset d;
  d.transform = make_image_transform(in.transform);
  const Plan& plan = plan_for(d.transform->output_spec());
  const bool shards = in.is == ImageInput::Is::Shards ||
                      (in.is == ImageInput::Is::Detect && !in.folder && holds_shards(in.paths));
  if (!shards) {
    auto folder = in.folder ? in.folder : open_image_folder(in.paths.front(), world_size, agree);
    d.classes = folder->classes();
    d.source = std::move(folder);
    if (mixed) d.mix = mix_of(in.transform, d.classes.size());
    return d;
  }
  TarShardOptions o;
  o.labels = in.labels;
  const std::vector<std::string> files = list_tar_shards(in.paths);
  o.stream = stream_shards(files, in.stream, plan.stream);
  d.source = std::make_shared<TarShardSource>(files, o);
  if (mixed) d.mix = mix_of(in.transform, 0);
  return d;
}

Dataset open_tokens(const TokenInput& in, const PlanFor& plan_for) {
  auto source = std::make_shared<TokenFileSource>(in.paths, in.seq_len, in.dtype);
  Dataset d;
  if (in.widen) {
    d.transform = std::make_shared<TokenWidenTransform>(source->dtype(), source->spec().shape[0]);
  } else {
    d.transform = std::make_shared<CopyTransform>(source->spec());
  }
  d.source = std::move(source);
  plan_for(d.transform->output_spec());
  return d;
}

Dataset open_records(const RecordInput& in, const PlanFor& plan_for) {
  SampleSpec spec{in.dtype, in.shape};
  if (spec.shape.empty()) {
    spec.shape = {static_cast<int64_t>(in.record_bytes / dtype_size(in.dtype))};
  }
  auto source = std::make_shared<RecordFileSource>(in.path, in.record_bytes, in.labels_path, spec);
  Dataset d;
  d.transform = std::make_shared<CopyTransform>(source->spec());
  d.source = std::move(source);
  plan_for(d.transform->output_spec());
  return d;
}

}  // namespace

Dataset open_dataset(const DatasetSpec& spec, const PlanFor& plan_for, uint64_t world_size,
                     bool agree) {
  Dataset d;
  if (const auto* images = std::get_if<ImageInput>(&spec.input)) {
    d = open_images(*images, plan_for, world_size, agree);
  } else if (const auto* tokens = std::get_if<TokenInput>(&spec.input)) {
    d = open_tokens(*tokens, plan_for);
  } else {
    d = open_records(std::get<RecordInput>(spec.input), plan_for);
  }
  if (spec.first_samples > 0 && spec.first_samples < d.source->size() && !streamed(*d.source)) {
    d.source = std::make_shared<FirstSamples>(std::move(d.source), spec.first_samples);
  }
  return d;
}

}  // namespace stoker
