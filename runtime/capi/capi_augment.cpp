// The augmentations one at a time (stoker.transforms): their names, one operation on an RGB
// image of bytes, and the policies' tables, for users who compose their own policy and for
// the tests that hold each operation and table to torchvision's.
#include <optional>
#include <string>

#include "capi.hpp"
#include "stoker/transforms/augment_ops.hpp"
#include "stoker/transforms/augment_policy.hpp"
#include "stoker/transforms/augmix.hpp"
#include "stoker/transforms/batch_mix.hpp"

namespace stoker::capi {

namespace {

template <class E, size_t N>
std::vector<std::string> names(const EnumName<E> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& e : table) out.emplace_back(e.name);
  return out;
}

template <class E, size_t N>
E named(const EnumName<E> (&table)[N], const Call& c, const char* key, const char* argument) {
  const std::string name = c.at(key).get<std::string>();
  const std::optional<E> value = value_named(table, name);
  if (!value) {
    throw ValueError(std::string(argument) + "='" + name + "': expected one of " +
                     names_of(table, ", "));
  }
  return *value;
}

// torchvision's fill as 3 bytes (the Python layer has int()'d each value).
Fill fill_of(const json& f) {
  Fill fill{};
  if (!f.is_array() || f.size() != fill.size()) {
    throw ValueError("fill=" + f.dump() + ": expected 3 whole numbers 0..255");
  }
  for (size_t i = 0; i < fill.size(); ++i) {
    if (!f[i].is_number_integer() || f[i].get<int64_t>() < 0 || f[i].get<int64_t>() > 255) {
      throw ValueError("fill=" + f.dump() + ": expected 3 whole numbers 0..255");
    }
    fill[i] = f[i].get<uint8_t>();
  }
  return fill;
}

// The call's image (its width x height x 3 bytes), copied into `pixels`.
RgbPixels image_of(const Call& c, std::string& pixels) {
  const int64_t width = c.at("width").get<int64_t>(), height = c.at("height").get<int64_t>();
  pixels = c.data;
  if (width < 0 || height < 0 || width > INT32_MAX || height > INT32_MAX ||
      pixels.size() != static_cast<size_t>(width) * static_cast<size_t>(height) * 3) {
    throw ValueError("image: expected " + std::to_string(height) + " x " + std::to_string(width) +
                     " x 3 bytes, got " + std::to_string(pixels.size()));
  }
  return {reinterpret_cast<uint8_t*>(pixels.data()), static_cast<int>(width),
          static_cast<int>(height)};
}

// One operation (stoker.transforms.apply_op): the image's bytes in, its bytes out.
void apply_op_call(const Call& c, Result& r) {
  const AugmentOp op = named(kAugmentOpNames, c, "op", "op_name");
  const Interpolation interpolation =
      named(kInterpolationNames, c, "interpolation", "interpolation");
  std::string pixels;
  const RgbPixels image = image_of(c, pixels);
  std::string spare(pixels.size(), '\0');
  apply_augment_op(op, c.at("magnitude").get<double>(), image,
                   reinterpret_cast<uint8_t*>(spare.data()), interpolation, fill_of(c.at("fill")));
  r.bytes(std::move(pixels));
}

// AugMix on one image (stoker.transforms.augmix): the loader's draw for the sample of that
// key and the mixed bytes.
void augmix_call(const Call& c, Result& r) {
  const Interpolation interpolation =
      named(kInterpolationNames, c, "interpolation", "interpolation");
  std::string pixels;
  const RgbPixels image = image_of(c, pixels);
  const std::vector<AugmentSpaceOp> space =
      augmentation_space(AugmentPolicy::AugMix, default_magnitude_bins(AugmentPolicy::AugMix),
                         image.height, image.width);
  const AugMixDraw d = draw_augmix(
      space,
      {c.at("seed").get<uint64_t>(), c.at("epoch").get<uint64_t>(), c.at("key").get<uint64_t>()});
  json chains = json::array();
  for (int i = 0; i < kAugMixWidth; ++i) {
    json steps = json::array();
    for (int j = 0; j < d.depth[i]; ++j) {
      const AugMixStep& s = d.chains[i][j];
      steps.push_back({{"op", to_string(s.op)},
                       {"op_index", s.op_index},
                       {"bin", s.bin},
                       {"negate", s.negate},
                       {"magnitude", s.magnitude}});
    }
    chains.push_back(steps);
  }
  augmix(d, image, interpolation);
  r.value = {{"m", d.m}, {"weights", d.weights}, {"chains", chains}};
  r.bytes(std::move(pixels));
}

// A policy's tables (stoker.transforms.augmentation_space and sub_policies): its space for
// num_bins (null: the policy's default) and an image of height x width, its sub-policies.
void policy_call(const Call& c, Result& r) {
  const AugmentPolicy policy = named(kAugmentPolicyNames, c, "policy", "policy");
  const json& bins = c.at("num_bins");
  const int num_bins = bins.is_null() ? default_magnitude_bins(policy) : bins.get<int>();
  json space = json::array();
  for (const AugmentSpaceOp& s :
       augmentation_space(policy, num_bins, c.at("height").get<int>(), c.at("width").get<int>())) {
    space.push_back({to_string(s.op), s.magnitudes, s.is_signed});
  }
  json subs = json::array();
  for (const SubPolicy& sub : sub_policies(policy)) {
    json steps = json::array();
    for (const AugmentStep& step : sub) {
      steps.push_back(
          {to_string(step.op), step.probability, step.bin < 0 ? json() : json(step.bin)});
    }
    subs.push_back(steps);
  }
  r.value = {{"space", space}, {"sub_policies", subs}, {"num_bins", num_bins}};
}

// A batch's MixUp/CutMix draw (stoker.transforms.mix_draw): what the loader draws for the
// batch of that key, with those options.
void mix_draw_call(const Call& c, Result& r) {
  ImageTransformOptions o;
  o.mixup_alpha = c.at("mixup_alpha").get<double>();
  o.cutmix_alpha = c.at("cutmix_alpha").get<double>();
  o.size = c.at("size").get<int>();
  const MixDraw d = BatchMix(o, 1).draw(
      {c.at("seed").get<uint64_t>(), c.at("epoch").get<uint64_t>(), c.at("key").get<uint64_t>()});
  r.value = {{"kind", d.kind == MixDraw::Kind::MixUp ? "mixup" : "cutmix"},
             {"lambda", d.lambda},
             {"beta", d.beta},
             {"r_x", d.r_x},
             {"r_y", d.r_y},
             {"box", {d.x1, d.y1, d.x2, d.y2}}};
}

}  // namespace

Calls augment_calls() {
  return {
      {"augment_tables",
       [](const Call&, Result& r) {
         r.value = {{"ops", names(kAugmentOpNames)},
                    {"interpolations", names(kInterpolationNames)},
                    {"policies", names(kAugmentPolicyNames)}};
       }},
      {"apply_op", apply_op_call},
      {"augmix", augmix_call},
      {"augment_policy", policy_call},
      {"mix_draw", mix_draw_call},
  };
}

}  // namespace stoker::capi
