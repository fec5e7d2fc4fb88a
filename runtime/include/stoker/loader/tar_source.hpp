// Tar shards in WebDataset naming: the files of one sample are consecutive tar members
// sharing a key (the member's path up to the first '.' of its file name), e.g.
// n01440764/000123.jpg + n01440764/000123.cls. A sample is its .jpg/.jpeg bytes (any
// case) and its label, the decimal integer in .cls (-1 when the sample has none). Groups
// without a JPEG member (metadata-only keys) are not samples.
//
// Every shard's headers are indexed once, at construction (ustar, GNU long names, PAX
// path records); read() preads the image bytes at their offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/loader/source.hpp"

namespace stoker {

class TarShardSource : public Source {
 public:
  // `shards`: tar files, or folders whose *.tar files (sorted) are all taken.
  // Throws stoker::Error naming the shard and byte offset for a missing or unreadable
  // shard, a bad header checksum, a truncated shard, or a .cls that is not an integer;
  // and naming the inputs when there are no shards or no samples.
  explicit TarShardSource(const std::vector<std::string>& shards);

  uint64_t size() const override { return samples_.size(); }
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  std::string location(uint64_t index) const override;  // "SHARD@OFFSET"
  // Hash of the members' names and sizes and the labels, in order.
  uint64_t fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

  const std::vector<std::string>& shards() const { return shards_; }
  int64_t label(uint64_t index) const { return samples_[index].label; }
  uint64_t bytes() const { return total_bytes_; }  // of all images

 private:
  struct Entry {
    uint64_t offset = 0, size = 0;
    int64_t label = -1;
    uint32_t shard = 0;
  };
  void index_shard(uint32_t shard);

  std::vector<std::string> shards_;
  std::vector<Entry> samples_;
  uint64_t fingerprint_ = 0, total_bytes_ = 0;
};

}  // namespace stoker
