// What one sample is, as bytes: its element type and shape. Sources that hand out
// fixed-size samples (tokens, records) say it; transforms say what they write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stoker {

enum class DType { U8, U16, U32, I64, F16, F32 };
size_t dtype_size(DType t);
const char* to_string(DType t);

struct SampleSpec {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;  // per sample, e.g. {3, 224, 224}
  size_t bytes() const;
};

}  // namespace stoker
