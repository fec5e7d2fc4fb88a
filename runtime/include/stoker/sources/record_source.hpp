// A file of fixed-size binary records: N records of R bytes each, no header. Sample i is
// bytes [i*R, (i+1)*R). Labels are 0, or come from an optional labels file holding N
// native-endian int64 values (label i for record i), e.g. written by numpy's
// `labels.astype('<i8').tofile(path)`.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "stoker/sources/sample_spec.hpp"
#include "stoker/sources/source.hpp"

namespace stoker {

class MappedFile;

class RecordFileSource : public Source {
 public:
  // `spec` says how to read a record (dtype and shape); its bytes must equal
  // record_bytes. Default: {record_bytes} of uint8.
  // Throws stoker::Error naming the file and sizes for: record size 0, an empty file, a
  // size that is not a multiple of the record, a spec of another size, a labels file
  // whose size is not 8 x records.
  RecordFileSource(const std::string& path, uint64_t record_bytes,
                   const std::string& labels_path = {}, std::optional<SampleSpec> spec = {});
  ~RecordFileSource() override;

  uint64_t size() const override { return records_; }
  RawSample read(uint64_t index, std::vector<std::byte>& scratch) const override;
  std::string location(uint64_t index) const override;  // "FILE@BYTE_OFFSET"
  // Of the files' names and sizes, the record size and a sample of their content
  // (src/sources/content_sample.hpp), made at open.
  uint64_t fingerprint() const override { return fingerprint_; }
  std::string describe() const override;

  const SampleSpec& spec() const { return spec_; }
  uint64_t record_bytes() const { return record_bytes_; }
  double bytes_per_sample() const override { return static_cast<double>(record_bytes_); }

 private:
  std::unique_ptr<MappedFile> file_, labels_;
  uint64_t record_bytes_ = 0, records_ = 0, fingerprint_ = 0;
  SampleSpec spec_;
};

}  // namespace stoker
