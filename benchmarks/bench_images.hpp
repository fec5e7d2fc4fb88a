// The JPEGs the image benchmarks time (bench_image_pipeline, bench_jpeg_stages): the first
// `most` images of the folder STOKER_BENCH_IMAGES names, else 32 synthetic photo-like
// 500x375 JPEGs (quality 90). Read once, before a benchmark's clock starts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "stoker/sources/image_source.hpp"
#include "transforms/jpeg_encoder.hpp"

namespace stoker {

inline std::vector<std::vector<std::byte>> load_bench_images(uint64_t most) {
  std::vector<std::vector<std::byte>> v;
  if (const char* dir = std::getenv("STOKER_BENCH_IMAGES")) {
    ImageFolderSource src(dir);
    std::vector<std::byte> scratch;
    for (uint64_t i = 0; i < std::min<uint64_t>(src.size(), most); ++i) {
      const RawSample s = src.read(i, scratch);
      v.emplace_back(s.bytes.begin(), s.bytes.end());
    }
  } else {
    for (uint64_t i = 0; i < 32; ++i) {
      v.push_back(encode_jpeg(synthetic_image(500, 375, i), 500, 375, 90));
    }
  }
  return v;
}

}  // namespace stoker
