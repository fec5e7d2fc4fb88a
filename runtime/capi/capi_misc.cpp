// The rest of the C interface: the library's facts (one call at import), the image pipeline's
// choices and decoder for references and tests, an image folder listed once per job, and the
// pinner's callbacks.
#include <atomic>
#include <cstring>
#include <span>

#include "capi.hpp"
#include "capi_objects.hpp"
#include "capi_options.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/fork_check.hpp"
#include "stoker/common/node_name.hpp"
#include "stoker/distributed/shared_listing.hpp"
#include "stoker/loader/loader_fields.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"
#include "stoker/transforms/image_fields.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace stoker::capi {

namespace {

std::atomic<bool> g_callbacks_off{false};

template <class T>
json rows(const std::vector<OptionField<T>>& table) {
  const T defaults{};
  json out = json::array();
  for (const OptionField<T>& r : table) {
    json row = {{"name", r.name},
                {"kind", to_string(r.kind)},
                {"help", r.help},
                {"bench", r.bench},
                {"none", r.none ? json(r.none) : json()}};
    if (r.kind == OptionKind::Whole) row.update({{"min", r.min}, {"max", r.max}});
    if (r.kind != OptionKind::Whole && r.kind != OptionKind::Flag && r.kind != OptionKind::Choice) {
      row.update({{"lo", r.lo}, {"hi", r.hi}});
    }
    if (!r.choices.empty())
      row["choices"] = std::vector<std::string>(r.choices.begin(), r.choices.end());
    std::visit(
        [&](const auto& v) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
            row["default"] = v;
        },
        r.get(defaults));
    out.push_back(row);
  }
  return out;
}

// The facts the Python layer reads once, at import.
void library_info(const Call&, Result& r) {
  json fields = json::array();
  for (const PlanField& f : plan_fields()) fields.push_back({f.name, f.env, f.example});
#ifdef STOKER_HAVE_MPI
  const bool mpi = true;
#else
  const bool mpi = false;
#endif
#ifdef STOKER_BUILT_WITH_CUDA
  const bool cuda = true;
#else
  const bool cuda = false;
#endif
  r.value = {{"abi", STOKER_ABI},
             {"built_with_mpi", mpi},
             {"built_with_cuda", cuda},
             {"plan_fields", fields},
             {"verbose_var", kVerboseVar},
             {"limits",
              {{"max_workers", limits::kMaxWorkers},
               {"max_prefetch", limits::kMaxPrefetch},
               {"default_prefetch", limits::kDefaultPrefetch},
               {"max_shuffle_buffer", limits::kMaxShuffleBuffer}}},
             {"loader_fields", rows(loader_fields())},
             {"image_fields", rows(image_fields())}};
}

SampleKey key_of(const Call& c) {
  return {c.at("seed").get<uint64_t>(), c.at("epoch").get<uint64_t>(),
          c.at("index").get<uint64_t>()};
}

void crop_box_call(const Call& c, Result& r) {
  const ImageTransformOptions o = image_options(c.at("options"), {});
  const int w = c.at("width").get<int>(), h = c.at("height").get<int>();
  const CropBox b = o.train ? random_resized_crop(w, h, key_of(c), o) : center_crop(w, h, o);
  r.value = {b.x, b.y, b.w, b.h};
}

void decode_call(const Call& c, Result& r) {
  const RgbImage img = decode_rgb(std::as_bytes(std::span(c.data.data(), c.data.size())));
  r.value = {img.height, img.width};
  r.bytes(std::string(reinterpret_cast<const char*>(img.pixels.data()), img.pixels.size()));
}

// Rank 0's side of the once-per-job listing over the caller's transport: the folder, and the
// message for the others in the bytes. When the folder cannot be listed the message says so
// (send it all the same) and the value holds the error's text.
void list_folder(const Call& c, Result& r) {
  std::string message;
  try {
    auto folder = list_and_share(c.path("root"), [&](const std::string& m) { message = m; });
    r.object = std::make_unique<FolderObject>(std::move(folder));
    r.value = {{"failed", nullptr}};
  } catch (const Error& e) {
    if (message.empty()) message = shared_listing_error(e.what());
    r.value = {{"failed", shown_text(e.what())}};
  }
  r.bytes(std::move(message));
}

// Page-locks through the caller's callbacks; none runs after stoker_callbacks_off() or in a
// forked child (the process that made them is gone there).
class CallbackPinner final : public HostPinner {
 public:
  CallbackPinner(stoker_pin_fn pin, stoker_unpin_fn unpin, void* ctx, std::string description)
      : pin_(pin), unpin_(unpin), ctx_(ctx), description_(std::move(description)) {}
  bool pin(void* base, size_t bytes, std::string* why) override {
    if (g_callbacks_off.load() || made_in_.forked()) {
      *why = "the caller's runtime is shutting down";
      return false;
    }
    char text[512] = {};
    if (pin_(ctx_, base, bytes, text, sizeof text) == 0) return true;
    text[sizeof text - 1] = '\0';
    *why = text[0] != '\0' ? text : "the pin callback failed";
    return false;
  }
  void unpin(void* base, size_t) noexcept override {
    if (!g_callbacks_off.load() && !made_in_.forked()) unpin_(ctx_, base);
  }
  std::string describe() const override { return description_; }

 private:
  stoker_pin_fn pin_;
  stoker_unpin_fn unpin_;
  void* ctx_;
  std::string description_;
  ForkCheck made_in_;
};

}  // namespace

Calls misc_calls() {
  return {
      {"info", library_info},
      {"crop_box", crop_box_call},
      {"flipped",
       [](const Call& c, Result& r) {
         const ImageTransformOptions o = image_options(c.at("options"), {});
         r.value = o.train && random_flip(key_of(c), o);
       }},
      {"decode_image", decode_call},
      {"folder_list", list_folder},
      {"folder_take",
       [](const Call& c, Result& r) {
         r.object = std::make_unique<FolderObject>(
             take_shared_listing(c.path("root"), c.data, c.at("rank").get<uint64_t>()));
       }},
      {"shared_listing_error",
       [](const Call& c, Result& r) {
         r.bytes(shared_listing_error(c.at("what").get<std::string>()));
       }},
      {"node_name", [](const Call&, Result& r) { r.value = shown_text(node_name(process_env())); }},
      {"node_copy_problem",
       [](const Call& c, Result& r) {
         r.value =
             shown_text(node_copy_problem(*c.object<FolderObject>(0, "a listed folder").folder));
       }},
      {"node_copy_error",
       [](const Call& c, Result& r) {
         r.value =
             shown_text(node_copy_error(c.path("root"), c.at("problem").get<std::string>()).what());
       }},
  };
}

}  // namespace stoker::capi

using namespace stoker;
using namespace stoker::capi;

extern "C" {

int stoker_pinner_new(stoker_pin_fn pin, stoker_unpin_fn unpin, void* ctx, const char* description,
                      stoker_object** out) {
  return guarded([&] {
    *out = nullptr;
    if (pin == nullptr || unpin == nullptr) throw TypeError("stoker_pinner_new: no callback");
    auto p = std::make_shared<CallbackPinner>(pin, unpin, ctx, description ? description : "");
    *out = new PinnerObject(std::move(p));
  });
}

void stoker_callbacks_off(void) {
  g_callbacks_off.store(true);
}

int stoker_sampler_indices(stoker_object* sampler, uint64_t first, uint64_t count, uint64_t* out,
                           uint64_t* written) {
  return guarded([&] {
    *written = 0;
    auto* s = dynamic_cast<SamplerObject*>(sampler);
    if (s == nullptr) throw TypeError("stoker_sampler_indices: not a sampler");
    const uint64_t end = std::min(s->sampler.length(), first + count);
    for (uint64_t i = first; i < end; ++i) out[(*written)++] = s->sampler.at(i);
  });
}

}  // extern "C"
