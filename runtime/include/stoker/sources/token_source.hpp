// Memory-mapped token files: flat arrays of uint16 or uint32 token ids (native byte order,
// no header, as GPT-style pre-training writes them), or numpy .npy files of one dimension
// (their header says the type). One file, or a set: a list of files and folders (a
// folder's files, sorted by name, hidden ones left out), as pre-training corpora ship.
//
// Sample i is the window of seq_len+1 tokens starting at token i*seq_len of its file:
// the stride is seq_len, so consecutive windows share one token (inputs = w[0..seq_len),
// targets = w[1..seq_len]). Windows never straddle two files: a file of n tokens gives
// (n - 1) / seq_len windows, and the set's windows are its files' in order. The label is 0.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stoker/sources/sample_spec.hpp"
#include "stoker/sources/source.hpp"

namespace stoker {

class MappedFile;

class TokenFileSource : public Source {
 public:
  // One file (or folder) of `dtype` tokens (DType::U16 or DType::U32). Throws stoker::Error
  // naming the file and sizes for an empty file, one whose size is not a multiple of the
  // token size, or one shorter than one window; and for seq_len 0 or another dtype.
  TokenFileSource(const std::string& path, uint64_t seq_len, DType dtype = DType::U16);
  // A token set. `dtype`: the type of every file; nullopt: the first .npy file's, and
  // uint16 for a set of raw files only. Throws stoker::Error, besides the above, naming
  // the first file whose .npy header says another type, an .npy file that is not a
  // one-dimensional uint16/uint32 array, a path that does not exist, and a folder that
  // holds no file.
  TokenFileSource(const std::vector<std::string>& paths, uint64_t seq_len,
                  std::optional<DType> dtype = std::nullopt);
  ~TokenFileSource() override;

  uint64_t size() const override { return windows_; }
  // A view into the mapping: no copy, `scratch` is not used.
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  std::string location(uint64_t index) const override;  // "FILE@BYTE_OFFSET"
  // Of every file's name and size, in order, the sequence length, the token type and a
  // sample of the content (src/sources/content_sample.hpp), made at open: a resume state
  // from another set, or from this set rewritten, is refused.
  uint64_t fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

  SampleSpec spec() const { return {dtype_, {static_cast<int64_t>(seq_len_ + 1)}}; }
  uint64_t tokens() const { return tokens_; }  // of all files
  double bytes_per_sample() const override { return static_cast<double>(spec().bytes()); }
  uint64_t seq_len() const { return seq_len_; }
  DType dtype() const { return dtype_; }
  size_t files() const { return files_.size(); }

 private:
  struct File {
    std::unique_ptr<MappedFile> map;
    uint64_t data = 0;    // byte offset of the first token (the .npy header's size)
    uint64_t tokens = 0;  // in the file
    uint64_t first = 0;   // the set's index of the file's first window
  };
  void open(const std::vector<std::string>& paths, std::optional<DType> dtype);
  size_t file_of(uint64_t index) const;

  std::vector<File> files_;
  uint64_t seq_len_ = 0, tokens_ = 0, windows_ = 0, fingerprint_ = 0;
  DType dtype_ = DType::U16;
  size_t token_bytes_ = 2;
};

}  // namespace stoker
