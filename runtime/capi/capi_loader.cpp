// The loader across the C interface: opening one on a dataset (open_dataset's spec from the
// Python layer's arguments), its per-batch calls, its state and stats.
#include <chrono>
#include <optional>

#include "capi.hpp"
#include "capi_objects.hpp"
#include "capi_options.hpp"
#include "capi_state.hpp"
#include "stoker/common/fork_check.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/loader/dataset.hpp"
#include "stoker/loader/measure_values.hpp"

namespace stoker::capi {

namespace {

std::optional<DType> dtype_or_none(const json& v) {
  if (v.is_null()) return std::nullopt;
  const std::optional<DType> t = parse_dtype(v.get<std::string>());
  if (!t) throw ValueError("dtype=" + v.get<std::string>() + ": expected " + names_of(kDTypeNames));
  return t;
}

DatasetSpec dataset_spec(const std::string& kind, const json& s, const Call& c) {
  DatasetSpec spec;
  if (kind == "images") {
    ImageInput in;
    in.transform = image_options(s, {"root", "shards", "stream", "labels"});
    if (auto* f = c.find<FolderObject>("a listed folder")) in.folder = f->folder;
    if (!s.at("root").is_null()) {
      in.is = ImageInput::Is::Folder;
      in.paths = {bytes_of_hex(s.at("root").get<std::string>(), "root")};
    } else {
      in.is = ImageInput::Is::Shards;
      in.paths = paths_of(s.at("shards"), "shards");
    }
    if (!s.at("stream").is_null()) in.stream = s.at("stream").get<bool>();
    in.labels = s.at("labels").get<bool>();
    spec.input = std::move(in);
  } else if (kind == "tokens") {
    TokenInput in;
    in.paths = paths_of(s.at("paths"), "path");
    in.seq_len = s.at("seq_len").get<uint64_t>();
    in.dtype = dtype_or_none(s.at("dtype"));
    in.widen = s.at("widen").get<bool>();
    spec.input = std::move(in);
  } else if (kind == "records") {
    RecordInput in;
    in.path = bytes_of_hex(s.at("path").get<std::string>(), "path");
    in.record_bytes = s.at("record_bytes").get<uint64_t>();
    if (!s.at("labels_path").is_null()) {
      in.labels_path = bytes_of_hex(s.at("labels_path").get<std::string>(), "labels_path");
    }
    in.dtype = *dtype_or_none(s.at("dtype"));
    if (!s.at("shape").is_null()) in.shape = s.at("shape").get<std::vector<int64_t>>();
    spec.input = std::move(in);
  } else {
    throw ValueError("kind=" + kind + ": expected images, tokens or records");
  }
  return spec;
}

void open_loader(const Call& c, Result& r) {
  // The loader's arguments first: a bad one is named before any dataset is read.
  LoaderOptions options = loader_options(c.at("loader"));
  if (auto* p = c.find<PlanObject>("a plan")) options.plan = p->plan;
  if (auto* p = c.find<PinnerObject>("a pinner")) {
    // Only when the batches go to a GPU: pin whatever the plan says (a plan made where no GPU
    // was seen still feeds the device the caller chose).
    options.pinner = p->pinner;
    options.force_pin = true;
  }
  const DatasetSpec spec = dataset_spec(c.at("kind").get<std::string>(), c.at("source"), c);
  auto l = std::make_unique<LoaderObject>();
  l->loader = Loader::open(spec, std::move(options));
  r.object = std::move(l);
}

// Runs f on the loader under its consumer lock.
template <class F>
void with_loader(const Call& c, F f) {
  LoaderObject& l = c.object<LoaderObject>(0, "a loader");
  l.made_in.check("stoker.Loader");  // before the lock: a parent's thread may hold it
  std::lock_guard lock(l.mu);
  f(l.get());
}

json info(const Loader& x) {
  return {{"epoch", x.epoch()},
          {"next_loop_epoch", x.next_loop_epoch()},
          {"batches_per_epoch", x.batches_per_epoch()},
          {"samples_per_epoch", x.length()},
          {"rank", x.sampler().options().rank},
          {"world_size", x.sampler().options().world_size},
          {"depth", x.depth()},
          {"plan_source", x.plan_source()},
          {"dtype", to_string(x.spec().dtype)},
          {"shape", x.spec().shape},
          // One sample's label: int64, or a mixed batch's float32 row of its classes.
          {"label_dtype", x.mix() ? "float32" : "int64"},
          {"label_shape", x.mix() ? json::array({x.mix()->classes()}) : json::array()},
          {"dataset_size", x.dataset_size()},
          {"batch_size", x.batch_size()},
          {"describe", shown_text(x.describe())},
          {"classes", x.classes()}};
}

json stats(const LoaderStats& s) {
  json d = json::object();
  // Every quantity of run_measures() that stats() shows, under its key (in its group's
  // dict), and under its old key too for one release.
  for (const MeasureRow& row : run_measures()) {
    if (!row.stats) continue;
    json& target = row.group ? d[row.group] : d;
    std::visit([&](auto v) { target[row.stats] = v; }, measure_value(s, row.id));
    if (row.old_stats) target[row.old_stats] = target[row.stats];
  }
  json files = json::array();
  for (const std::string& f : s.skipped_files) files.push_back(hex_of(f));
  d["skipped_files_hex"] = files;
  json history = json::array();
  for (const DepthChange& h : s.depth_history) {
    history.push_back({{"time_ns", h.time_ns},
                       {"batch", h.batch},
                       {"from", h.from},
                       {"to", h.to},
                       {"reason", to_string(h.reason)},
                       {"wait_ns", h.wait_ns},
                       {"text", h.describe()}});
  }
  d["depth_history"] = history;
  json first = json::array();
  for (const EpochFirstBatch& e : s.epoch_first_batch)
    first.push_back({{"epoch", e.epoch}, {"wait_ns", e.wait_ns}});
  d["epoch_first_batch"] = first;
  json notes = json::array();
  for (const std::string& n : s.notes) notes.push_back(shown_text(n));
  d["notes"] = notes;
  d["agreement"] = s.agreement;
  d["summary"] = shown_text(s.summary());
  return d;
}

// Stops and joins the workers now; batches still held stay valid. In a forked child it only
// lets go of the parent's loader (which joins and locks nothing there).
void close_loader(const Call& c, Result&) {
  LoaderObject& l = c.object<LoaderObject>(0, "a loader");
  std::unique_ptr<Loader> dying;
  if (l.made_in.forked()) {
    dying = std::move(l.loader);
  } else {
    std::lock_guard lock(l.mu);
    dying = std::move(l.loader);
  }
  dying.reset();
}

}  // namespace

Loader& LoaderObject::get() {
  if (!loader) throw ValueError("the loader was closed");
  return *loader;
}

Calls loader_calls() {
  return {
      {"loader_open", open_loader},
      {"loader_info",
       [](const Call& c, Result& r) { with_loader(c, [&](Loader& x) { r.value = info(x); }); }},
      {"loader_plan",
       [](const Call& c, Result& r) {
         with_loader(c, [&](Loader& x) { r.object = std::make_unique<PlanObject>(x.plan()); });
       }},
      {"loader_start_epoch",
       [](const Call& c, Result&) { with_loader(c, [](Loader& x) { x.start_epoch(); }); }},
      {"loader_set_epoch",
       [](const Call& c, Result&) {
         with_loader(c, [&](Loader& x) { x.set_epoch(c.at("epoch").get<uint64_t>()); });
       }},
      {"loader_state",
       [](const Call& c, Result& r) {
         with_loader(c, [&](Loader& x) {
           r.value = state_dict(x.state(c.at("held_back").get<uint64_t>()));
         });
       }},
      {"loader_restore",
       [](const Call& c, Result&) {
         const SamplerState state = parse_state(c.at("text").get<std::string>());
         with_loader(c, [&](Loader& x) { x.restore(state); });
       }},
      {"loader_loop_view",
       [](const Call& c, Result& r) {
         with_loader(c, [&](Loader& x) {
           r.value = to_words(epoch_view(x.sampler().options(), x.next_loop_epoch(),
                                         c.at("comm_rank").get<uint64_t>()));
         });
       }},
      {"loader_stats",
       [](const Call& c, Result& r) {
         with_loader(c, [&](Loader& x) { r.value = stats(x.stats()); });
       }},
      {"loader_interrupt",
       [](const Call& c, Result&) { with_loader(c, [](Loader& x) { x.interrupt(); }); }},
      {"loader_close", close_loader},
  };
}

}  // namespace stoker::capi

using namespace stoker;
using namespace stoker::capi;

extern "C" {

int stoker_loader_next(stoker_object* loader, int64_t limit_ns, stoker_batch* out) {
  int outcome = STOKER_OK;
  const int status = guarded([&] {
    *out = stoker_batch{};
    auto* l = dynamic_cast<LoaderObject*>(loader);
    if (l == nullptr) throw TypeError("stoker_loader_next: not a loader");
    l->made_in.check("stoker.Loader");
    std::optional<Batch> b;
    {
      std::lock_guard lock(l->mu);
      Loader& x = l->get();
      if (limit_ns < 0) {
        b = x.next();
        if (!b) outcome = STOKER_END;
      } else {
        switch (x.next_within(std::chrono::nanoseconds(limit_ns), b)) {
          case Loader::Next::Batch:
            break;
          case Loader::Next::End:
            outcome = STOKER_END;
            break;
          case Loader::Next::NotYet:
            outcome = STOKER_NOT_YET;
            break;
        }
      }
    }
    if (!b) return;
    auto* held = new Batch(std::move(*b));
    *out = {held,         held->data(),  held->label_data(), held->indices().data(),
            held->size(), held->epoch(), held->number()};
  });
  return status != STOKER_OK ? status : outcome;
}

void stoker_batch_release(void* handle) {
  delete static_cast<Batch*>(handle);
}

}  // extern "C"
