// What the file-backed sources share: reading a byte range with pread into the worker's
// scratch (no allocation once the scratch is large enough), and the FNV-1a hash their
// fingerprints are built from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "stoker/source.hpp"

namespace stoker {

// Reads `size` bytes at `offset` of `path` into `scratch`. Throws SampleError (with
// `index`, and "PATH" or "PATH@OFFSET" as location) when the file cannot be opened or
// read, or ends early.
std::span<const std::byte> pread_sample(const char* path, uint64_t offset, uint64_t size,
                                        uint64_t index, std::vector<std::byte>& scratch);

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}
inline uint64_t fnv1a(std::string_view s, uint64_t h) { return fnv1a(s.data(), s.size(), h); }
inline uint64_t fnv1a(uint64_t v, uint64_t h) { return fnv1a(&v, sizeof v, h); }

}  // namespace stoker
