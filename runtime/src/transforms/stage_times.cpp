#include "stoker/transforms/transform.hpp"

namespace stoker {

StageTimes& StageTimes::operator+=(const StageTimes& o) {
  read_ns += o.read_ns;
  decode_ns += o.decode_ns;
  transform_ns += o.transform_ns;
  collate_ns += o.collate_ns;
  return *this;
}

}  // namespace stoker
