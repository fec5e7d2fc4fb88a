#include "sources/tar_walk.hpp"

#include <algorithm>

#include "sources/image_names.hpp"
#include "sources/tar_format.hpp"
#include "stoker/common/error.hpp"

namespace stoker {

namespace {
constexpr uint64_t kMaxRecord = uint64_t{1} << 20;  // a long-name record larger is corrupt
constexpr uint64_t kMaxLabelText = 64;              // longer label text is not an integer
}  // namespace

bool TarSampleWalker::next_member() {
  unsigned char h[tar::kBlock];
  long_names_ = {};
  for (;;) {
    const uint64_t header_at = in_.offset();
    if (!in_.read(h, sizeof h, "a member header")) {
      if (!started_) {
        throw Error(in_.path(), "is empty: not a tar shard", "re-create or re-download the shard");
      }
      // No end-of-archive blocks (every tar writer ends with them): the shard was cut at a
      // member's boundary, as a copy cut at a multiple of its block size is. The group
      // being read may have lost its label: the rest of the shard is the cut.
      throw ShardCut(in_.path(), in_.offset(),
                     "truncated tar shard: it ends at byte " + std::to_string(in_.offset()) +
                         " of its tar data, between two members, without tar's end-of-archive "
                         "blocks (cut short)");
    }
    started_ = true;
    if (tar::is_end_block(h)) return false;
    const tar::Header hd = tar::parse_header(h, tar::at(in_.path(), header_at));
    if (hd.long_name()) {  // names the next member
      if (hd.size > kMaxRecord) {
        throw Error(tar::at(in_.path(), header_at),
                    "a long-name record of " + std::to_string(hd.size) + " bytes (corrupt)",
                    "re-create or re-download the shard");
      }
      record_.resize(hd.size + 1);
      in_.read(record_.data(), hd.size, "a long-name record");
      record_[hd.size] = 0;
      in_.skip(hd.padded_size() - hd.size, "a long-name record");
      tar::read_long_names(hd.type,
                           std::string(reinterpret_cast<const char*>(record_.data()), hd.size),
                           long_names_);
      continue;
    }
    const std::string name = long_names_.name.empty() ? hd.name : long_names_.name;
    const std::string target = long_names_.link.empty() ? hd.link : long_names_.link;
    long_names_ = {};
    if (hd.symlink()) {
      throw Error(tar::at(in_.path(), header_at),
                  "member '" + name + "' is a symbolic link (to '" + target +
                      "'): a shard must hold its files' data",
                  "re-create the shard with tar --dereference (-h), which stores the files "
                  "the links point to");
    }
    if (hd.hard_link()) {
      link_member(hd, header_at, name, target);
      return true;
    }
    if (!hd.regular()) {  // folders, devices, global records: nothing to read (WebDataset)
      in_.skip(hd.padded_size(), "member", name);
      continue;
    }
    member_ = {name, hd.size, hd.padded_size(), in_.offset(), false};
    stored_[name] = {member_.data, member_.size};
    return true;
  }
}

void TarSampleWalker::link_member(const tar::Header& hd, uint64_t header_at,
                                  const std::string& name, const std::string& target) {
  auto it = stored_.find(target);
  if (it == stored_.end() && target.starts_with("./")) it = stored_.find(target.substr(2));
  if (it == stored_.end()) {
    throw Error(tar::at(in_.path(), header_at),
                "member '" + name + "' is a hard link to '" + target +
                    "', which no earlier member of the shard is",
                "re-create the shard with tar --hard-dereference, which stores every file's "
                "data");
  }
  member_ = {name, it->second.size, hd.padded_size(), it->second.data, true};
  stored_[name] = it->second;
}

void TarSampleWalker::read_data(void* out, uint64_t n, std::string_view what) {
  if (!member_.linked) {
    in_.read(out, n, what, member_.name);
    in_.skip(member_.padded - n, what, member_.name);
    return;
  }
  // The data lies earlier in the shard: read it again there (rare: GNU tar links a file
  // only when it is linked twice on disk).
  in_.skip(member_.padded, what, member_.name);
  ByteStream again(in_.path(), tar::kBlock * 128, true);
  again.skip(member_.data, what, member_.name);
  again.read(out, n, what, member_.name);
}

void TarSampleWalker::take_label_text(int rank) {
  label_rank_ = rank;
  label_member_ = member_.name;
  label_offset_ = member_.data;
  const uint64_t keep = std::min(member_.size, kMaxLabelText + 1);
  label_text_.resize(keep);
  read_data(label_text_.data(), keep, "label member");
}

void TarSampleWalker::finish_label(TarSample& out) const {
  if (!labels_) {
    out.label = -1;
    return;
  }
  if (label_rank_ == 0) {
    throw Error(tar::at(in_.path(), out.offset),
                "sample '" + key_ + "' (member '" + out.image +
                    "') has no label member (.cls, .cls2 or .txt)",
                "add the labels, or pass labels=false (--no-labels) to read label-free shards "
                "(every label is then -1)");
  }
  out.label = tar::parse_label(label_text_, in_.path(), label_offset_, label_member_);
}

bool TarSampleWalker::next(TarSample& out, std::vector<std::byte>* bytes) {
  for (;;) {
    if (!pending_ && !next_member()) return false;
    key_ = tar::split_key(member_.name).first;
    bool has_image = false;
    label_rank_ = 0;
    do {
      const std::string_view ext = tar::split_key(member_.name).second;
      const int rank = labels_ ? tar::label_rank(ext) : 0;
      if (!has_image && is_image_extension(ext)) {
        has_image = true;
        out.image = member_.name;
        out.offset = member_.data;
        out.size = member_.size;
        if (bytes != nullptr) {
          bytes->resize(member_.size);
          read_data(bytes->data(), member_.size, "image member");
        } else {
          in_.skip(member_.padded, "image member", member_.name);
        }
      } else if (rank != 0 && (label_rank_ == 0 || rank < label_rank_)) {
        take_label_text(rank);
      } else {
        in_.skip(member_.padded, "member", member_.name);
      }
      pending_ = next_member();
    } while (pending_ && tar::split_key(member_.name).first == key_);
    if (has_image) {
      finish_label(out);
      return true;
    }
    if (!pending_) return false;
  }
}

}  // namespace stoker
