// Walks a tar shard's members in file order and groups them into WebDataset samples:
// consecutive members sharing a key (n01/000123.jpg + n01/000123.cls). A sample is the
// group's first image member (image_names.hpp: jpg, jpeg, png, webp in any case) and its label:
// the text of its .cls, else .cls2, else .txt member. Groups without an image are not
// samples. One walker serves the index pass (bytes skipped) and streaming (bytes kept).
//
// Members as GNU tar and Python's tarfile write them: names in ustar (prefix), GNU ('L')
// and PAX (path=) form; a hard link (GNU tar's default for a file linked twice on disk) is
// its earlier member's data, read again from the shard when streaming; a symbolic link is
// an error (the shard would not hold the data); folders and other members are passed over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sources/byte_stream.hpp"
#include "sources/tar_format.hpp"

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
    bool linked = false;                      // a hard link: data and size are its earlier member's
  };
  struct Stored {
    uint64_t data = 0, size = 0;
  };
  bool next_member();  // the next file member's header into member_; false at the end
  void link_member(const tar::Header& hd, uint64_t header_at, const std::string& name,
                   const std::string& target);
  // The first n bytes of member_'s data into `out`, past the rest of it.
  void read_data(void* out, uint64_t n, std::string_view what);
  void take_label_text(int rank);
  void finish_label(TarSample& out) const;

  ByteStream& in_;
  bool labels_;
  bool started_ = false, pending_ = false;  // pending_: member_'s data is not consumed yet
  Member member_;
  tar::LongNames long_names_;
  std::unordered_map<std::string, Stored> stored_;  // the file members so far, by name
  std::string key_, label_member_, label_text_;
  std::vector<unsigned char> record_;
  int label_rank_ = 0;
  uint64_t label_offset_ = 0;
};

}  // namespace stoker
