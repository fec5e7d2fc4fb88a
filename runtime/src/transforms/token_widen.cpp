#include "stoker/transforms/token_widen.hpp"

#include <chrono>
#include <cstring>

#include "stoker/common/error.hpp"
#include "stoker/sources/mapped_read.hpp"

namespace stoker {

namespace {
// Read under mapped_read's recovery point: nothing here needs a destructor.
template <class T>
void widen(const std::byte* in, size_t bytes, void* out) {
  auto* dst = static_cast<int64_t*>(out);
  for (size_t i = 0; i < bytes / sizeof(T); ++i) {
    T v;
    std::memcpy(&v, in + i * sizeof(T), sizeof(T));  // the mapping may be unaligned
    dst[i] = static_cast<int64_t>(v);
  }
}
}  // namespace

TokenWidenTransform::TokenWidenTransform(DType from, int64_t tokens)
    : from_(from), tokens_(tokens) {
  if (from != DType::U16 && from != DType::U32)
    throw Error("dtype", std::string("cannot widen ") + to_string(from) + " tokens",
                "use uint16 or uint32");
  if (tokens <= 0) throw Error("seq_len", "must be at least 1");
}

void TokenWidenTransform::apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch&,
                                StageTimes& times) const {
  auto start = std::chrono::steady_clock::now();
  size_t want = static_cast<size_t>(tokens_) * dtype_size(from_);
  if (in.bytes.size() != want)
    throw SampleError{key.index, "",
                      "token window of " + std::to_string(in.bytes.size()) + " bytes, expected " +
                          std::to_string(want)};
  // A token file that shrank while mapped is a stoker::Error naming it, not a SIGBUS.
  read_sample_bytes(in.bytes, from_ == DType::U16 ? widen<uint16_t> : widen<uint32_t>, out);
  times.collate_ns += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

std::string TokenWidenTransform::describe() const {
  return std::string("tokens ") + to_string(from_) + " -> int64 x " + std::to_string(tokens_);
}

}  // namespace stoker
