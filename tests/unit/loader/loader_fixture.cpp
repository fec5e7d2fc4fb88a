#include "loader_fixture.hpp"

#include "common/fnv1a.hpp"

namespace stoker::test {

uint64_t record_checksum(const std::byte* payload, size_t n) {
  return fnv1a(payload, n);
}

std::string write_records(const TempDir& dir, uint64_t n, size_t bytes,
                          const std::set<uint64_t>& corrupt) {
  std::vector<std::byte> all(n * bytes);
  std::vector<int64_t> labels(n);
  for (uint64_t i = 0; i < n; ++i) {
    std::byte* r = all.data() + i * bytes;
    for (size_t j = 8; j < bytes; ++j) r[j] = static_cast<std::byte>((i * 7 + j) & 0xff);
    uint64_t sum = record_checksum(r + 8, bytes - 8) + (corrupt.count(i) ? 1 : 0);
    std::memcpy(r, &sum, sizeof sum);
    labels[i] = static_cast<int64_t>(i * 10);
  }
  write_bytes(dir.file("labels.bin"), labels.data(), labels.size() * sizeof(int64_t));
  std::string path = dir.file("records.bin");
  write_bytes(path, all.data(), all.size());
  return path;
}

}  // namespace stoker::test
