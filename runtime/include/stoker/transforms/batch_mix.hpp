// MixUp and CutMix on a whole batch, as torchvision's reference training script applies
// them after collating (references/classification/transforms.py: RandomMixup and
// RandomCutmix, one of the two per batch through RandomChoice when both alphas are set):
// each sample i is mixed with sample i-1 (batch.roll(1, 0): sample 0 with the last, a batch
// of one with itself), lambda ~ Beta(alpha, alpha), and the targets become float32 one-hot
// rows mixed with the same lambda.
//
// The draws come from the keyed generator (counter_rng.hpp) with the batch's own key, so a
// resumed epoch repeats them; the mixing functions are pure and tested against a plain
// statement of the reference's arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "stoker/sources/sample_spec.hpp"
#include "stoker/transforms/image_options.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

class CounterRng;

// What one batch gets: MixUp with `lambda`, or CutMix: the box [x1, x2) x [y1, y2) pasted
// from the partner, `lambda` then 1 - box area / image area (the reference's correction).
struct MixDraw {
  enum class Kind { MixUp, CutMix };
  Kind kind = Kind::MixUp;
  double lambda = 1.0;  // the weight of the sample itself; the partner's is 1 - lambda
  int x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  // What was drawn: the Beta draw (lambda before CutMix's correction) and CutMix's centre.
  double beta = 1.0;
  int r_x = 0, r_y = 0;
};

// RandomCutmix's box for lambda and its centre (r_x < width, r_y < height): half-sides
// int(0.5 * sqrt(1 - lambda) * side), clamped to the image, and the lambda it gives.
MixDraw cutmix_box(double lambda, int r_x, int r_y, int height, int width);

// A draw from Beta(alpha, alpha) (alpha > 0) from `rng`'s stream: the first component of
// Dirichlet([alpha, alpha]), as the reference draws it, from two Gamma(alpha) draws.
double beta_draw(CounterRng& rng, double alpha);

// What a sample of the batch looks like, for the box and the arithmetic.
struct MixImage {
  DType dtype = DType::F32;  // F32, F16 or U8
  Layout layout = Layout::CHW;
  int height = 0, width = 0;  // 3 channels
  size_t bytes() const;
};

// Mixes `count` samples at `data` in place as the draw says, sample i with the unmixed
// sample i-1 (0 with count-1). F32 as torch's float32 mul_ and add_ (x * float(lambda) +
// y * float(1 - lambda), each step rounded to float); F16 the same in float, rounded once
// to half; U8 the same in float, rounded to the nearest integer (ties to even). `spare`
// holds one sample (bytes()): it keeps the last sample's unmixed copy.
void mix_images(const MixDraw& d, const MixImage& image, std::byte* data, size_t count,
                std::byte* spare);

// The soft targets of `count` labels (each in 0..classes-1) into `out` (count x classes
// float32): one-hot rows mixed as the reference's target.mul_(lambda).add_(rolled.mul_(1 -
// lambda)) in float32.
void mix_targets(double lambda, const int64_t* labels, size_t count, size_t classes, float* out);

// The batch mixing of a loader: the options, the class count and the sample. Throws
// stoker::Error naming the option for a sample it cannot mix (not 3 channels) or no class.
class BatchMix {
 public:
  BatchMix(const ImageTransformOptions& o, uint64_t classes);
  // Whether the options ask for mixing at all (an alpha > 0).
  static bool wanted(const ImageTransformOptions& o) {
    return o.mixup_alpha > 0 || o.cutmix_alpha > 0;
  }
  uint64_t classes() const { return classes_; }
  size_t label_bytes() const { return classes_ * sizeof(float); }  // per sample
  size_t sample_bytes() const { return image_.bytes(); }
  // The batch's draw: MixUp or CutMix (1/2 each when both are on), lambda (a float32 value,
  // as the reference draws it), the box.
  MixDraw draw(const SampleKey& key) const;
  // Mixes `count` samples and writes their soft targets (labels in 0..classes-1).
  void apply(const MixDraw& d, std::byte* data, const int64_t* labels, size_t count, float* out,
             std::byte* spare) const;
  std::string describe() const;

 private:
  double mixup_alpha_ = 0, cutmix_alpha_ = 0;
  uint64_t classes_ = 0;
  MixImage image_;
};

}  // namespace stoker
