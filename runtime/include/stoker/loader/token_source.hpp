// A memory-mapped token file: a flat array of uint16 or uint32 token ids (native byte
// order, no header), as GPT-style pre-training writes them. Sample i is the window of
// seq_len+1 tokens starting at token i*seq_len: the stride is seq_len, so consecutive
// windows share one token (the last input token of one is the first of the next), and
// inputs = w[0..seq_len), targets = w[1..seq_len]. The last window must fit:
// size() = (tokens - 1) / seq_len. The label is 0.
#pragma once

#include <memory>
#include <string>

#include "stoker/loader/source.hpp"
#include "stoker/loader/transform.hpp"

namespace stoker {

class MappedFile;

class TokenFileSource : public Source {
 public:
  // dtype: DType::U16 or DType::U32. Throws stoker::Error naming the file and sizes for
  // an empty file, one whose size is not a multiple of the token size, or one shorter
  // than one window; and for seq_len 0 or another dtype.
  TokenFileSource(const std::string& path, uint64_t seq_len, DType dtype = DType::U16);
  ~TokenFileSource() override;

  uint64_t size() const override { return windows_; }
  // A view into the mapping: no copy, `scratch` is not used.
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  std::string location(uint64_t index) const override;  // "FILE@BYTE_OFFSET"
  uint64_t fingerprint() const override;
  std::string describe() const override;

  SampleSpec spec() const { return {dtype_, {static_cast<int64_t>(seq_len_ + 1)}}; }
  uint64_t tokens() const { return tokens_; }
  uint64_t seq_len() const { return seq_len_; }

 private:
  std::unique_ptr<MappedFile> file_;
  uint64_t seq_len_ = 0, tokens_ = 0, windows_ = 0;
  DType dtype_;
  size_t token_bytes_ = 2;
};

}  // namespace stoker
