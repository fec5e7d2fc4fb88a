#include "stoker/transforms/image_fields.hpp"

#include <limits>

namespace stoker {

namespace {

using Options = ImageTransformOptions;
using Field = OptionField<Options>;
constexpr uint64_t kMaxSide = 1 << 15;
// The most classes mixed targets may have: a float32 row per sample of at most 4 MiB.
constexpr uint64_t kMaxClasses = 1 << 20;
// Beta(alpha, alpha) is all but a constant 1/2 long before this.
constexpr double kMaxAlpha = 1000.0;

Field flag(const char* name, bool Options::*member, const char* help) {
  return {.name = name,
          .kind = OptionKind::Flag,
          .help = help,
          .set = [member](Options& o, const OptionValue& v) { o.*member = std::get<bool>(v); },
          .get = [member](const Options& o) -> OptionValue { return o.*member; }};
}

Field whole(const char* name, int Options::*member, uint64_t min, uint64_t max, const char* help) {
  return {.name = name,
          .kind = OptionKind::Whole,
          .help = help,
          .min = min,
          .max = max,
          .set = [member](
                     Options& o,
                     const OptionValue& v) { o.*member = static_cast<int>(std::get<uint64_t>(v)); },
          .get = [member](const Options& o) -> OptionValue {
            return static_cast<uint64_t>(o.*member);
          }};
}

Field side(const char* name, int Options::*member, const char* help) {
  return whole(name, member, 1, kMaxSide, help);
}

Field fraction(const char* name, double Options::*member, const char* help) {
  return {.name = name,
          .kind = OptionKind::Fraction,
          .help = help,
          .lo = 0.0,
          .hi = 1.0,
          .set = [member](Options& o, const OptionValue& v) { o.*member = std::get<double>(v); },
          .get = [member](const Options& o) -> OptionValue { return o.*member; }};
}

// A Beta distribution's alpha, 0 (off) to kMaxAlpha.
Field alpha(const char* name, double Options::*member, const char* help) {
  Field f = fraction(name, member, help);
  f.hi = kMaxAlpha;
  return f;
}

// (min, max) into two members.
Field range(const char* name, double Options::*min, double Options::*max, double hi,
            const char* help) {
  return {.name = name,
          .kind = OptionKind::Range,
          .help = help,
          .lo = 0.0,
          .hi = hi,
          .set =
              [min, max](Options& o, const OptionValue& v) {
                const auto& r = std::get<std::vector<double>>(v);
                o.*min = r.at(0);
                o.*max = r.at(1);
              },
          .get = [min, max](const Options& o) -> OptionValue {
            return std::vector<double>{o.*min, o.*max};
          }};
}

Field channels(const char* name, std::array<float, 3> Options::*member, double lo,
               const char* help) {
  return {.name = name,
          .kind = OptionKind::Triple,
          .help = help,
          .lo = lo,
          .set =
              [member](Options& o, const OptionValue& v) {
                const auto& x = std::get<std::vector<double>>(v);
                for (size_t i = 0; i < 3; ++i) (o.*member)[i] = static_cast<float>(x.at(i));
              },
          .get = [member](const Options& o) -> OptionValue {
            return std::vector<double>((o.*member).begin(), (o.*member).end());
          }};
}

template <class E, size_t N>
std::vector<const char*> names(const EnumName<E> (&table)[N]) {
  std::vector<const char*> out;
  for (const auto& e : table) out.push_back(e.name);
  return out;
}

// An enum member named by its table's names.
template <class E, size_t N>
Field choice(const char* name, E Options::*member, const EnumName<E> (&table)[N],
             const char* help) {
  return {.name = name,
          .kind = OptionKind::Choice,
          .help = help,
          .choices = names(table),
          .set =
              [member, &table](Options& o, const OptionValue& v) {
                o.*member = *value_named(table, std::get<std::string>(v));
              },
          .get = [member, &table](const Options& o) -> OptionValue {
            return std::string(name_of(table, o.*member));
          }};
}

}  // namespace

const std::vector<Field>& image_fields() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  static const std::vector<Field> rows = {
      flag("train", &Options::train,
           "RandomResizedCrop + flip + Normalize; False: Resize(resize_shorter) + "
           "CenterCrop(size) + Normalize"),
      side("size", &Options::size, "Output height and width"),
      side("resize_shorter", &Options::resize_shorter,
           "Evaluation: the shorter side before the centre crop"),
      range("scale", &Options::scale_min, &Options::scale_max, 1.0,
            "RandomResizedCrop's area fraction (min, max)"),
      range("ratio", &Options::ratio_min, &Options::ratio_max, kInf,
            "RandomResizedCrop's aspect ratio (min, max)"),
      fraction("flip_p", &Options::flip_p, "Training: the probability of a horizontal flip"),
      channels("mean", &Options::mean, -kInf, "Normalize's mean per channel, on the 0..1 scale"),
      channels("std", &Options::std, 0.0, "Normalize's standard deviation per channel"),
      {.name = "dtype",
       .kind = OptionKind::Choice,
       .help = "float32 or float16 (normalized), or uint8 (0..255, not normalized)",
       .choices = {"float32", "float16", "uint8"},
       .set = [](Options& o,
                 const OptionValue& v) { o.dtype = *parse_dtype(std::get<std::string>(v)); },
       .get = [](const Options& o) -> OptionValue { return std::string(to_string(o.dtype)); }},
      {.name = "layout",
       .kind = OptionKind::Choice,
       .help = "CHW or HWC",
       .choices = {"CHW", "HWC"},
       .set = [](Options& o,
                 const OptionValue& v) { o.layout = *parse_layout(std::get<std::string>(v)); },
       .get = [](const Options& o) -> OptionValue { return std::string(to_string(o.layout)); }},
      {.name = "auto_augment_policy",
       .kind = OptionKind::Choice,
       .help = "Training: torchvision's TrivialAugmentWide (ta_wide), RandAugment (ra), "
               "AutoAugment (imagenet, cifar10, svhn) or AugMix (augmix: severity 3, 3 chains; "
               "not with bicubic) after the flip, as the reference preset's --auto-augment",
       .choices = names(kAugmentPolicyNames),
       .none = "no automatic augmentation",
       .set =
           [](Options& o, const OptionValue& v) {
             o.auto_augment_policy = std::holds_alternative<std::monostate>(v)
                                         ? std::nullopt
                                         : parse_augment_policy(std::get<std::string>(v));
           },
       .get = [](const Options& o) -> OptionValue {
         if (!o.auto_augment_policy) return std::monostate{};
         return std::string(to_string(*o.auto_augment_policy));
       }},
      whole("ra_magnitude", &Options::ra_magnitude, 0, 30,
            "RandAugment's magnitude bin (of 31), as the reference preset's --ra-magnitude"),
      fraction("random_erase_prob", &Options::random_erase_prob,
               "Training: the probability of torchvision's RandomErasing after Normalize "
               "(scale 0.02-0.33, ratio 0.3-3.3, value 0)"),
      choice("interpolation", &Options::interpolation, kInterpolationNames,
             "The resize's filter in training and evaluation, and the augmentation's: "
             "bilinear, bicubic (PIL's, clamped to 0..255) or nearest, as the reference "
             "preset's --interpolation"),
      alpha("mixup_alpha", &Options::mixup_alpha,
            "MixUp of each batch with lambda ~ Beta(alpha, alpha), as the reference script's "
            "--mixup-alpha (0: off; with cutmix_alpha, one of the two per batch)"),
      alpha("cutmix_alpha", &Options::cutmix_alpha,
            "CutMix of each batch with lambda ~ Beta(alpha, alpha), as the reference script's "
            "--cutmix-alpha (0: off); with either alpha the labels are float32 one-hot rows"),
      {.name = "num_classes",
       .kind = OptionKind::Whole,
       .help = "The mixed targets' classes (each label must be below it)",
       .min = 1,
       .max = kMaxClasses,
       .none = "the image folder's class count (tar shards: give it)",
       .set =
           [](Options& o, const OptionValue& v) {
             o.num_classes = std::holds_alternative<std::monostate>(v) ? 0 : std::get<uint64_t>(v);
           },
       .get = [](const Options& o) -> OptionValue {
         if (o.num_classes == 0) return std::monostate{};
         return o.num_classes;
       }},
      flag("antialias", &Options::antialias,
           "Widen the bilinear or bicubic filter when downscaling, as PIL and torchvision do"),
      flag("dct_scaling", &Options::dct_scaling,
           "Let the JPEG decoder shrink by 2, 4 or 8 first when the crop is that much larger "
           "(faster; pixels differ slightly)"),
  };
  return rows;
}

}  // namespace stoker
