#include "stoker/transforms/copy_transform.hpp"

#include <chrono>

#include "stoker/sources/mapped_read.hpp"

namespace stoker {

void CopyTransform::apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch&,
                          StageTimes& times) const {
  const size_t n = spec_.bytes();
  if (in.bytes.size() != n) {
    throw SampleError{
        key.index,
        {},
        "sample has " + std::to_string(in.bytes.size()) + " bytes, expected " + std::to_string(n)};
  }
  auto t0 = std::chrono::steady_clock::now();
  copy_sample_bytes(out, in.bytes);  // a mapped file that shrank: an error, not SIGBUS
  times.collate_ns += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
}

std::string CopyTransform::describe() const {
  std::string shape;
  for (int64_t d : spec_.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
  return std::string("copy ") + to_string(spec_.dtype) + "[" + shape + "]";
}

}  // namespace stoker
