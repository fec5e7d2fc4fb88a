#include "stoker/sources/sample_spec.hpp"

namespace stoker {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::U8:
      return 1;
    case DType::U16:
    case DType::F16:
      return 2;
    case DType::U32:
    case DType::F32:
      return 4;
    case DType::I64:
      return 8;
  }
  return 1;
}

size_t SampleSpec::bytes() const {
  size_t n = dtype_size(dtype);
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

}  // namespace stoker
