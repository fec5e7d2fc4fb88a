// Tar shards: listing, the index pass (random access) or the counting pass (streaming),
// and reading. The member walk itself is tar_walk.cpp.
#include <algorithm>
#include <filesystem>

#include "common/fnv1a.hpp"
#include "sources/byte_stream.hpp"
#include "sources/content_sample.hpp"
#include "sources/file_read.hpp"
#include "sources/image_names.hpp"
#include "sources/shard_index_cache.hpp"
#include "sources/tar_format.hpp"
#include "sources/tar_walk.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/tar_source.hpp"

namespace stoker {

namespace fs = std::filesystem;

namespace {

constexpr size_t kIndexReadBytes = size_t{64} << 10;  // random access: headers, then a seek

bool ends_with_ignoring_case(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         equals_ignoring_case(std::string_view(s).substr(s.size() - suffix.size()), suffix);
}

const char* codec_word(ByteStream::Codec c) {
  return c == ByteStream::Codec::Gzip ? "gzip" : "zstd";
}

// The shards' files and sizes (as each was found when indexed or counted: no stat again),
// for the content part of the fingerprint.
std::vector<ContentFile> shard_contents(const std::vector<std::string>& shards,
                                        const std::vector<uint64_t>& sizes) {
  std::vector<ContentFile> files;
  for (size_t i = 0; i < shards.size(); ++i) files.push_back({shards[i].c_str(), sizes[i]});
  return files;
}

uint64_t sample_hash(const TarSample& s, uint64_t h) {
  return fnv1a(static_cast<uint64_t>(s.label), fnv1a(s.size, fnv1a(s.image, h)));
}

// The rest of a cut shard, from the byte where its data ends, as one corrupt sample: the
// loader skips it under on_corrupt='skip' (naming it) and stops naming it otherwise.
SampleError cut_sample(uint64_t index, const ShardCut& cut) {
  return {index, cut.where(),
          cut.problem() +
              "; the samples before the cut are read, the rest of the shard is "
              "this one corrupt sample"};
}

uint64_t cut_hash(const ShardCut& cut, uint64_t h) {
  return fnv1a(cut.at, fnv1a(std::string_view("cut"), h));
}

class TarCursor final : public ShardCursor {
 public:
  TarCursor(const std::string& path, bool labels)
      : in_(path, kStreamReadBytes, false), walker_(in_, labels) {}
  // After the whole samples of a cut shard, its cut as a SampleError (index 0: the caller
  // knows the index), then the end.
  bool next(std::vector<std::byte>* bytes, int64_t& label) override {
    if (cut_) return false;
    try {
      if (!walker_.next(sample_, bytes)) return false;
    } catch (const ShardCut& cut) {
      cut_ = true;
      throw cut_sample(0, cut);
    }
    label = sample_.label;
    return true;
  }
  ReadCounters counters() const override { return in_.counters(); }

 private:
  ByteStream in_;
  TarSampleWalker walker_;
  TarSample sample_;
  bool cut_ = false;
};

}  // namespace

bool is_compressed_shard_name(const std::string& path) {
  for (std::string_view ext : {".tar.gz", ".tgz", ".tar.zst", ".tzst"}) {
    if (ends_with_ignoring_case(path, ext)) return true;
  }
  return false;
}

bool is_tar_shard_name(const std::string& path) {
  return ends_with_ignoring_case(path, ".tar") || is_compressed_shard_name(path);
}

bool stream_shards(const std::vector<std::string>& shards, std::optional<bool> asked,
                   bool plan_streams) {
  if (asked) return *asked;
  if (plan_streams) return true;
  return std::any_of(shards.begin(), shards.end(), is_compressed_shard_name);
}

std::vector<std::string> list_tar_shards(const std::vector<std::string>& inputs) {
  std::vector<std::string> shards;
  for (const std::string& in : inputs) {
    const fs::file_status st =
        dataset_path_status(in, "tar shard or folder", "check the shard list");
    if (!fs::is_directory(st)) {
      shards.push_back(in);
      continue;
    }
    const std::vector<std::string> found = folder_files(in, is_tar_shard_name);
    if (found.empty()) {
      throw Error(in, "is a folder without tar shards (.tar, .tar.gz, .tgz, .tar.zst, .tzst)",
                  "pass the shards' folder, or the shard files");
    }
    shards.insert(shards.end(), found.begin(), found.end());
  }
  if (shards.empty())
    throw Error("tar shards", "no tar shards given", "pass .tar files or a folder of them");
  return shards;
}

TarShardSource::TarShardSource(const std::vector<std::string>& inputs, TarShardOptions options)
    : options_(options), shards_(list_tar_shards(inputs)) {
  fingerprint_ = kFnvOffset;
  for (uint32_t s = 0; s < shards_.size(); ++s) {
    shard_first_.push_back(samples_);
    const uint64_t before = options_.stream ? 0 : entries_.size();
    const uint64_t hash = options_.stream ? count_shard(s) : index_shard(s);
    if (!options_.stream) shard_samples_.push_back(entries_.size() - before);
    samples_ += shard_samples_.back();
    fingerprint_ = fnv1a(hash, fingerprint_);
  }
  fingerprint_ = content_sample_hash(shard_contents(shards_, shard_bytes_), fingerprint_);
  if (samples_ == 0) {
    throw Error(shards_.front(), "the tar shards hold no image samples",
                "expected members like KEY.jpg (+ KEY.cls) in WebDataset naming");
  }
}

TarShardSource::~TarShardSource() = default;

uint64_t TarShardSource::index_shard(uint32_t shard) {
  ByteStream in(shards_[shard], kIndexReadBytes, true);
  shard_bytes_.push_back(in.file_size());
  if (in.codec() != ByteStream::Codec::Plain) {
    throw Error(shards_[shard],
                std::string("is a ") + codec_word(in.codec()) +
                    "-compressed tar shard: it cannot be read by random access",
                "stream it: TarShardOptions::stream = true (stream=True in Python, --stream "
                "for stoker bench)");
  }
  TarSampleWalker walker(in, options_.labels);
  TarSample s;
  uint64_t hash = kFnvOffset;
  try {
    while (walker.next(s, nullptr)) {
      entries_.push_back({s.offset, s.size, s.label, shard});
      total_bytes_ += s.size;
      hash = sample_hash(s, hash);
    }
  } catch (const ShardCut& cut) {  // the rest of the shard: one sample that read() refuses
    entries_.push_back({cut.at, 0, -1, shard, static_cast<int32_t>(cuts_.size())});
    cuts_.push_back(cut_sample(0, cut));
    hash = cut_hash(cut, hash);
  }
  return hash;
}

uint64_t TarShardSource::count_shard(uint32_t shard) {
  const std::string& path = shards_[shard];
  // "+links": summaries counted since hard links are samples and a cut shard's rest is one;
  // an older summary of the same file counted otherwise and is not reused.
  const std::string variant = std::string(options_.labels ? "labels" : "no-labels") + "+links";
  // One stat per shard: the cache entry's check, and the shard's size for the fingerprint.
  const std::optional<ShardStamp> stamp = shard_stamp(path);
  std::optional<ShardSummary> summary;
  if (stamp) summary = load_shard_summary(path, *stamp, variant);
  if (summary) shard_bytes_.push_back(stamp->size);
  if (!summary) {
    ByteStream in(path, kStreamReadBytes, false);
    shard_bytes_.push_back(in.file_size());
    TarSampleWalker walker(in, options_.labels);
    TarSample s;
    summary = ShardSummary{0, 0, kFnvOffset};
    try {
      while (walker.next(s, nullptr)) {
        ++summary->samples;
        summary->bytes += s.size;
        summary->hash = sample_hash(s, summary->hash);
      }
    } catch (const ShardCut& cut) {  // the rest of the shard: one sample the cursor refuses
      ++summary->samples;
      summary->hash = cut_hash(cut, summary->hash);
    }
    if (stamp) store_shard_summary(path, *stamp, variant, *summary);
  }
  shard_samples_.push_back(summary->samples);
  total_bytes_ += summary->bytes;
  return summary->hash;
}

std::pair<uint32_t, uint64_t> TarShardSource::locate(uint64_t index) const {
  const auto it = std::upper_bound(shard_first_.begin(), shard_first_.end(), index);
  const auto shard = static_cast<uint32_t>(it - shard_first_.begin() - 1);
  return {shard, index - shard_first_[shard]};
}

std::unique_ptr<ShardCursor> TarShardSource::open_shard(uint32_t shard) const {
  return std::make_unique<TarCursor>(shards_.at(shard), options_.labels);
}

RawSample TarShardSource::read(uint64_t index, std::vector<std::byte>& scratch) const {
  if (index >= samples_) {
    throw SampleError{index, location(index),
                      "beyond the shards' " + std::to_string(samples_) + " samples"};
  }
  if (!options_.stream) {
    const Entry& e = entries_[index];
    if (e.cut >= 0) {
      SampleError cut = cuts_[static_cast<size_t>(e.cut)];
      cut.index = index;
      throw cut;
    }
    return {pread_sample(shards_[e.shard].c_str(), e.offset, e.size, index, scratch), e.label};
  }
  const uint32_t shard = locate(index).first;
  std::lock_guard lk(cursor_mu_);
  if (!cursor_ || cursor_shard_ != shard || index < cursor_next_) {
    cursor_ = open_shard(shard);
    cursor_shard_ = shard;
    cursor_next_ = shard_first_[shard];
  }
  int64_t label = -1;
  try {
    for (; cursor_next_ < index; ++cursor_next_) cursor_->next(nullptr, label);
    if (!cursor_->next(&scratch, label)) {
      cursor_.reset();
      throw SampleError{index, location(index), "the shard ends before this sample (it changed?)"};
    }
  } catch (SampleError& e) {  // a cut shard's rest: its own index
    cursor_.reset();
    e.index = index;
    throw;
  }
  ++cursor_next_;
  return {{scratch.data(), scratch.size()}, label};
}

std::string TarShardSource::location(uint64_t index) const {
  if (index >= samples_) return "tar shards[" + std::to_string(index) + "]";
  if (!options_.stream) return tar::at(shards_[entries_[index].shard], entries_[index].offset);
  const auto [shard, member] = locate(index);
  return shards_[shard] + "#" + std::to_string(member);
}

std::string TarShardSource::describe() const {
  return "tar shards (" + std::to_string(shards_.size()) + ", first " + shards_.front() +
         "): " + std::to_string(samples_) + " image samples, " +
         std::to_string(total_bytes_ / (1024 * 1024)) + " MiB" +
         (options_.stream ? ", streamed" : "") + (options_.labels ? "" : ", no labels");
}

}  // namespace stoker
