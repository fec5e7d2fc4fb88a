// What one sample is, as bytes: its element type and shape. Sources that hand out
// fixed-size samples (tokens, records) say it; transforms say what they write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "stoker/common/enum_names.hpp"

namespace stoker {

enum class DType { U8, U16, U32, I64, F16, F32 };
// numpy's names.
inline constexpr EnumName<DType> kDTypeNames[] = {{DType::U8, "uint8"},    {DType::U16, "uint16"},
                                                  {DType::U32, "uint32"},  {DType::I64, "int64"},
                                                  {DType::F16, "float16"}, {DType::F32, "float32"}};
inline const char* to_string(DType t) {
  return name_of(kDTypeNames, t);
}
// Inverse of to_string; nullopt for anything else.
inline std::optional<DType> parse_dtype(std::string_view s) {
  return value_named(kDTypeNames, s);
}
size_t dtype_size(DType t);

struct SampleSpec {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;  // per sample, e.g. {3, 224, 224}
  size_t bytes() const;
};

}  // namespace stoker
