// Tar shards in WebDataset naming: the files of one sample are consecutive tar members
// sharing a key (the member's path up to the first '.' of its file name), e.g.
// n01440764/000123.jpg + n01440764/000123.cls. A sample is its image member (.jpg, .jpeg
// or .png, any case; the decoder is chosen by the bytes) and its label: the decimal
// integer in its .cls, else .cls2, else .txt member, from 0 to 2^31-1. A sample without a
// label member, or with another value, is an error naming the shard and member, unless
// the shards are opened with labels = false (then every label is -1). Groups without an
// image (metadata-only keys) are not samples. A shard whose data ends early (cut, half
// copied; plain or compressed) holds its whole samples and then one more: the rest of the
// shard, which reads as a SampleError naming the shard and the byte where it ends, so that
// on_corrupt='skip' goes on with the other shards and every rank counts the same samples.
//
// Two ways to read them:
//  - random access (stream = false): plain .tar only. Every shard's headers are indexed
//    once, at construction; read() preads one image at its offset.
//  - streaming (stream = true): .tar, .tar.gz and .tar.zst. Construction counts each
//    shard's samples in one sequential pass (cached: shard_index_cache.hpp); the loader
//    then reads every shard from start to end in reads of 4 MiB, through a shuffle buffer
//    (docs/user-guide.md, "Streaming shards"). read() still works, by streaming the shard
//    up to the sample: fast in file order, slow otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "stoker/sources/shard_stream.hpp"

namespace stoker {

struct TarShardOptions {
  bool labels = true;   // false: label-free shards; every label is -1
  bool stream = false;  // read as streams (required for .tar.gz and .tar.zst)
};

// The shard files in `inputs`: files as given, folders' *.tar, *.tar.gz, *.tgz, *.tar.zst
// and *.tzst files (any case), sorted. Throws stoker::Error naming an input that does not
// exist or a folder that holds no shard.
std::vector<std::string> list_tar_shards(const std::vector<std::string>& inputs);

// True when a path names tar shards by its name: a .tar/.tar.gz/.tgz/.tar.zst/.tzst file
// (any case); is_compressed_shard_name: one of the compressed ones, which only stream.
bool is_tar_shard_name(const std::string& path);
bool is_compressed_shard_name(const std::string& path);

// Whether `shards` are read as streams (TarShardOptions::stream), the one rule of
// stoker.Loader and `stoker bench`: as `asked` when given; else when the plan streams
// (`plan_streams`: its profile's Stream, which the caller reads from the rank's plan) or a
// shard is compressed (those are only read as streams).
bool stream_shards(const std::vector<std::string>& shards, std::optional<bool> asked,
                   bool plan_streams);

class TarShardSource : public ShardStreamSource {
 public:
  // `shards`: as list_tar_shards() takes them. Throws stoker::Error naming the shard and
  // byte offset for an unreadable shard, a bad header checksum, corrupt compressed data, a missing
  // or bad label; naming a compressed shard opened for random access; and naming the inputs when
  // there are no samples.
  explicit TarShardSource(const std::vector<std::string>& shards, TarShardOptions options = {});
  ~TarShardSource() override;

  uint64_t size() const override { return samples_; }
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  // "SHARD@OFFSET" (random access) or "SHARD#M" (sample M of the shard, streaming).
  std::string location(uint64_t index) const override;
  // Hash of the members' names and sizes and the labels, shard by shard, in order, and of
  // a sample of the shard files' bytes (src/sources/content_sample.hpp): the same for both
  // ways of reading the same files.
  uint64_t fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

  bool streamed() const override { return options_.stream; }
  const std::vector<uint64_t>& shard_samples() const override { return shard_samples_; }
  std::unique_ptr<ShardCursor> open_shard(uint32_t shard) const override;
  const std::string& shard_name(uint32_t shard) const override { return shards_[shard]; }

  const std::vector<std::string>& shards() const { return shards_; }
  uint64_t bytes() const { return total_bytes_; }  // of all images
  double bytes_per_sample() const override {
    return size() ? static_cast<double>(total_bytes_) / static_cast<double>(size()) : 0.0;
  }

 private:
  struct Entry {
    uint64_t offset = 0, size = 0;
    int64_t label = -1;
    uint32_t shard = 0;
    int32_t cut = -1;  // the rest of a cut shard: its SampleError in cuts_
  };
  uint64_t index_shard(uint32_t shard);  // random access: entries; returns the shard's hash
  uint64_t count_shard(uint32_t shard);  // streaming: the summary, cached
  std::pair<uint32_t, uint64_t> locate(uint64_t index) const;  // shard, sample in it

  TarShardOptions options_;
  std::vector<std::string> shards_;
  std::vector<uint64_t> shard_samples_, shard_first_;  // count and first index per shard
  std::vector<uint64_t> shard_bytes_;                  // each shard file's size
  std::vector<Entry> entries_;                         // random access only
  std::vector<SampleError> cuts_;                      // random access: cut shards' rests
  uint64_t samples_ = 0, fingerprint_ = 0, total_bytes_ = 0;
  // read() while streaming: one cursor, continued when the next sample follows.
  mutable std::mutex cursor_mu_;
  mutable std::unique_ptr<ShardCursor> cursor_;
  mutable uint32_t cursor_shard_ = 0;
  mutable uint64_t cursor_next_ = 0;  // dataset index the cursor reads next
};

}  // namespace stoker
