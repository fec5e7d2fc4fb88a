// Token windows as int64, the dtype PyTorch's embeddings take. PyTorch 1.13 has no uint16
// or uint32 tensors, so the raw windows of a token file cannot be handed over as they are;
// widening in the worker threads, while collating into the slot, costs one pass the copy
// would have made anyway and keeps the main process free of a per-batch conversion.
#pragma once

#include "stoker/transforms/transform.hpp"

namespace stoker {

class TokenWidenTransform : public Transform {
 public:
  // `from`: DType::U16 or DType::U32; `tokens`: tokens per sample (seq_len + 1).
  TokenWidenTransform(DType from, int64_t tokens);
  SampleSpec output_spec() const override { return {DType::I64, {tokens_}}; }
  // Throws SampleError when the raw sample is not `tokens` tokens of `from`.
  void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& scratch,
             StageTimes& times) const override;
  std::string describe() const override;

 private:
  DType from_;
  int64_t tokens_;
};

}  // namespace stoker
