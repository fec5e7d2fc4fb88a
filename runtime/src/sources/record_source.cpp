#include "stoker/sources/record_source.hpp"
#include "sources/content_sample.hpp"
#include "sources/mapped_file.hpp"
#include "stoker/common/error.hpp"
#include "stoker/sources/mapped_read.hpp"

namespace stoker {

RecordFileSource::RecordFileSource(const std::string& path, uint64_t record_bytes,
                                   const std::string& labels_path, std::optional<SampleSpec> spec)
    : record_bytes_(record_bytes) {
  if (record_bytes == 0) throw Error(path, "record size 0", "give the record size in bytes");
  spec_ = spec ? *spec : SampleSpec{DType::U8, {static_cast<int64_t>(record_bytes)}};
  if (spec_.bytes() != record_bytes) {
    throw Error(path,
                "the sample spec holds " + std::to_string(spec_.bytes()) +
                    " bytes but a record is " + std::to_string(record_bytes),
                "make dtype size x shape equal the record size");
  }
  file_ = std::make_unique<MappedFile>(path);
  const uint64_t bytes = file_->size();
  if (bytes == 0) throw Error(path, "the record file is empty", "point at a file of records");
  if (bytes % record_bytes != 0) {
    throw Error(path,
                "size " + std::to_string(bytes) + " bytes is not a multiple of the " +
                    std::to_string(record_bytes) + "-byte record (" +
                    std::to_string(bytes / record_bytes) + " records and " +
                    std::to_string(bytes % record_bytes) + " bytes left over)",
                "check the record size, or whether the file was truncated");
  }
  records_ = bytes / record_bytes;
  if (!labels_path.empty()) {
    labels_ = std::make_unique<MappedFile>(labels_path);
    if (labels_->size() != records_ * sizeof(int64_t)) {
      throw Error(labels_path,
                  "holds " + std::to_string(labels_->size()) + " bytes, but " +
                      std::to_string(records_) + " records of " + path + " need " +
                      std::to_string(records_ * sizeof(int64_t)) + " (one int64 each)",
                  "write one int64 label per record");
    }
  }
  std::vector<ContentFile> content{{path.c_str(), bytes}};
  fingerprint_ = file_->fingerprint(record_bytes_);
  if (labels_) {
    fingerprint_ = labels_->fingerprint(fingerprint_);
    content.push_back({labels_path.c_str(), labels_->size()});
  }
  fingerprint_ = content_sample_hash(content, fingerprint_);
}

RecordFileSource::~RecordFileSource() = default;

RawSample RecordFileSource::read(uint64_t index, std::vector<std::byte>&) const {
  if (index >= records_) {
    throw SampleError{index, location(index),
                      "record index beyond the file's " + std::to_string(records_) + " records"};
  }
  RawSample s{file_->bytes().subspan(index * record_bytes_, record_bytes_), 0};
  if (labels_) {
    copy_sample_bytes(reinterpret_cast<std::byte*>(&s.label),
                      labels_->bytes().subspan(index * sizeof(int64_t), sizeof(int64_t)));
  }
  return s;
}

std::string RecordFileSource::location(uint64_t index) const {
  return file_->path() + "@" + std::to_string(index * record_bytes_);
}

std::string RecordFileSource::describe() const {
  return "record file " + file_->path() + ": " + std::to_string(records_) + " records of " +
         std::to_string(record_bytes_) + " bytes" + (labels_ ? ", labels " + labels_->path() : "");
}

}  // namespace stoker
