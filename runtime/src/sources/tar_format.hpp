// The tar format as the shard readers need it: 512-byte ustar/GNU/PAX headers, WebDataset
// keys, and the label members' text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace stoker::tar {

constexpr uint64_t kBlock = 512;

// "SHARD@OFFSET", the place every tar error names.
std::string at(const std::string& shard, uint64_t offset);

// The 512 bytes starting a member, decoded. Throws stoker::Error at `where` for a bad
// checksum (corrupt, or not a tar file) or a bad size field.
struct Header {
  std::string name;  // the 100-byte field, with the ustar prefix when there is one
  std::string link;  // a link's target (the 100-byte linkname field)
  uint64_t size = 0;
  char type = '0';
  bool regular() const { return type == '0' || type == '\0' || type == '7'; }
  bool hard_link() const { return type == '1'; }
  bool symlink() const { return type == '2'; }
  // Records naming the next member: GNU 'L' (its name), 'K' (its link's target), PAX 'x'.
  bool long_name() const { return type == 'L' || type == 'K' || type == 'x'; }
  uint64_t padded_size() const { return (size + kBlock - 1) / kBlock * kBlock; }
};
bool is_end_block(const unsigned char* block);  // all zeros: the archive's end
Header parse_header(const unsigned char* block, const std::string& where);

// What a long-name record says of the next member: its name and its link's target, from
// a GNU 'L' or 'K' record or a PAX 'x' record's path= and linkpath=; "" for what it does
// not say.
struct LongNames {
  std::string name, link;
};
void read_long_names(char type, const std::string& data, LongNames& into);

// WebDataset: key = the path up to the first '.' of its last component; ext = the rest.
std::pair<std::string_view, std::string_view> split_key(std::string_view name);

// A label member's extension: its rank among cls (1), cls2 (2), txt (3); 0 for others.
// A sample with several takes the lowest rank.
int label_rank(std::string_view ext);

// The label in a label member's text: a decimal integer from 0 to 2^31-1, blanks around
// it allowed. Throws stoker::Error at SHARD@OFFSET naming `member` otherwise.
int64_t parse_label(std::string_view text, const std::string& shard, uint64_t offset,
                    const std::string& member);

}  // namespace stoker::tar
