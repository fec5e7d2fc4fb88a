// The identity transform: copies a raw sample that already has the output layout (a token
// window, a fixed record) into the batch slot with one memcpy (timed as collate).
#pragma once

#include "stoker/transforms/transform.hpp"

namespace stoker {

class CopyTransform : public Transform {
 public:
  explicit CopyTransform(SampleSpec spec) : spec_(std::move(spec)) {}
  SampleSpec output_spec() const override { return spec_; }
  // Throws SampleError when the raw sample's size is not spec.bytes().
  void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& scratch,
             StageTimes& times) const override;
  std::string describe() const override;

 private:
  SampleSpec spec_;
};

}  // namespace stoker
