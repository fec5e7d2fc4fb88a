// Walks a tar shard's members in file order and groups them into WebDataset samples:
// consecutive members sharing a key (n01/000123.jpg + n01/000123.cls). A sample is the
// group's first image member (image_names.hpp: jpg, jpeg, png in any case) and its label:
// the text of its .cls, else .cls2, else .txt member. Groups without an image are not
// samples. One walker serves the index pass (bytes skipped) and streaming (bytes kept).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sources/byte_stream.hpp"

namespace stoker {

struct TarSample {
  std::string image;    // the image member's name
  uint64_t offset = 0;  // its data's offset in the (decompressed) shard
  uint64_t size = 0;    // its bytes
  int64_t label = -1;   // -1 when the walker does not read labels
};

class TarSampleWalker {
 public:
  // `labels`: every sample must have a label member holding an integer in 0..2^31-1,
  // else stoker::Error naming the shard and the member; false: labels are not read
  // (every label is -1).
  TarSampleWalker(ByteStream& in, bool labels) : in_(in), labels_(labels) {}

  // The next sample, its image bytes into `*bytes` (resized) or skipped when null.
  // False after the last one. Throws stoker::Error naming the shard and offset for a bad
  // header, a truncated shard, corrupt compressed data, or a bad or missing label.
  bool next(TarSample& out, std::vector<std::byte>* bytes);

 private:
  struct Member {
    std::string name;
    uint64_t size = 0, padded = 0, data = 0;  // data: offset of its first byte
  };
  bool next_member();  // the next regular member's header into member_; false at the end
  void take_label_text(int rank);
  void finish_label(TarSample& out) const;

  ByteStream& in_;
  bool labels_;
  bool started_ = false, pending_ = false;  // pending_: member_'s data is not consumed yet
  Member member_;
  std::string long_name_, key_, label_member_, label_text_;
  std::vector<unsigned char> record_;
  int label_rank_ = 0;
  uint64_t label_offset_ = 0;
};

}  // namespace stoker
