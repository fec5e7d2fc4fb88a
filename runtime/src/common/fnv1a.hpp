// FNV-1a, the hash the sources build their dataset fingerprints from (names and sizes;
// not cryptographic: the ranks only need to notice that their datasets differ).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace stoker {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;

// FNV-1a over bytes, continuing from `h` (kFnvOffset starts a new hash).
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnvOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}
inline uint64_t fnv1a(std::string_view s, uint64_t h) {
  return fnv1a(s.data(), s.size(), h);
}
inline uint64_t fnv1a(uint64_t v, uint64_t h) {
  return fnv1a(&v, sizeof v, h);
}

}  // namespace stoker
