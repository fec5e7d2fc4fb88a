#include "options.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <limits>
#include <set>
#include <string>

#include "arguments.hpp"
#include "py_pinner.hpp"
#include "stoker/plan/limits.hpp"
#include "stoker/plan/plan.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

// Refuses keys the converter does not know (a typo in the Python layer, not user input).
void check_keys(const py::dict& d, const std::set<std::string>& known, const char* what) {
  for (auto item : d) {
    auto key = py::cast<std::string>(item.first);
    if (!known.count(key)) throw py::type_error(std::string(what) + ": unknown option " + key);
  }
}

// The world as given (both) or to be detected (neither: 0, 0).
void read_world(const py::dict& d, LoaderOptions& o) {
  const py::object world_size = d["world_size"], rank = d["rank"];
  if (world_size.is_none() != rank.is_none()) {
    throw py::value_error("world_size=" + arg::repr(world_size) + ", rank=" + arg::repr(rank) +
                          ": give both or neither");
  }
  if (world_size.is_none()) return;
  // Not None here, but None is allowed (with rank None), and its TypeError says so.
  const auto no_limit = std::numeric_limits<uint64_t>::max();
  o.world_size = arg::integer_or_none<uint64_t>("world_size", world_size, 1, no_limit, 0);
  o.rank = arg::integer<uint64_t>("rank", rank, 0, o.world_size - 1);
}

}  // namespace

DType dtype_named(const std::string& name) {
  if (auto t = parse_dtype(name)) return *t;
  throw py::value_error("dtype=" + name + ": expected " + names_of(kDTypeNames));
}

LoaderOptions loader_options(const py::dict& d) {
  check_keys(d,
             {"batch_size", "drop_last", "shuffle", "seed", "world_size", "rank", "on_corrupt",
              "max_skip_fraction", "workers", "prefetch", "adaptive", "max_depth", "held_batches",
              "pin_threads", "pin_main_thread", "plan", "shuffle_buffer", "agree", "pinner"},
             "Loader");
  LoaderOptions o;
  read_world(d, o);
  o.batch_size = arg::integer<size_t>("batch_size", d["batch_size"], 1);
  o.shuffle = arg::boolean("shuffle", d["shuffle"]);
  o.seed = arg::integer<uint64_t>("seed", d["seed"], 0);
  o.drop_last = arg::boolean("drop_last", d["drop_last"]);
  o.workers = arg::integer_or_none("workers", d["workers"], 1, limits::kMaxWorkers, 0);
  o.prefetch = arg::integer_or_none("prefetch", d["prefetch"], 1, limits::kMaxPrefetch, 0);
  o.adaptive = arg::boolean("adaptive", d["adaptive"]);
  o.max_depth = arg::integer("max_depth", d["max_depth"], 0, limits::kMaxPrefetch);
  o.held_batches = arg::integer("held_batches", d["held_batches"], 1, limits::kMaxPrefetch);
  o.pin_threads = arg::boolean("pin_threads", d["pin_threads"]);
  if (arg::choice("on_corrupt", d["on_corrupt"], {"error", "skip"}) == "skip") {
    o.on_corrupt = CorruptPolicy::Skip;
  }
  o.max_skip_fraction = arg::number("max_skip_fraction", d["max_skip_fraction"], 0.0, 1.0);
  o.corrupt_names = {"on_corrupt='skip'", "max_skip_fraction"};
  o.shuffle_buffer = arg::integer_or_none<uint64_t>("shuffle_buffer", d["shuffle_buffer"], 1,
                                                    limits::kMaxShuffleBuffer, 0);
  // Set by stoker/_loader.py itself, not by the caller.
  o.agree = py::cast<bool>(d["agree"]);
  o.pin_main_thread = py::cast<bool>(d["pin_main_thread"]);
  if (!d["plan"].is_none()) o.plan = py::cast<Plan>(d["plan"]);
  if (d.contains("pinner") && !d["pinner"].is_none()) {
    // Given only when the batches go to a GPU: pin whatever the plan says (a plan made
    // where no GPU was seen still feeds the device the caller chose).
    o.pinner = python_pinner(py::cast<py::tuple>(d["pinner"]));
    o.force_pin = true;
  }
  return o;
}

ImageTransformOptions image_options(const py::dict& d) {
  check_keys(d,
             {"train", "size", "resize_shorter", "scale", "ratio", "flip_p", "mean", "std", "dtype",
              "layout", "antialias", "dct_scaling"},
             "image transform");
  ImageTransformOptions o;
  const auto given = [&d](const char* key) { return d.contains(key); };
  if (given("train")) o.train = arg::boolean("train", d["train"]);
  if (given("size")) o.size = arg::integer("size", d["size"], 1, 1 << 15);
  if (given("resize_shorter")) {
    o.resize_shorter = arg::integer("resize_shorter", d["resize_shorter"], 1, 1 << 15);
  }
  if (given("scale")) {
    const auto scale = arg::numbers("scale", d["scale"], 2, 0.0, true);
    if (scale[1] > 1.0) {
      throw py::value_error("scale=" + arg::repr(d["scale"]) +
                            ": the area fraction cannot exceed 1");
    }
    o.scale_min = scale[0];
    o.scale_max = scale[1];
  }
  if (given("ratio")) {
    const auto ratio = arg::numbers("ratio", d["ratio"], 2, 0.0, true);
    o.ratio_min = ratio[0];
    o.ratio_max = ratio[1];
  }
  if (given("flip_p")) o.flip_p = arg::number("flip_p", d["flip_p"], 0.0, 1.0);
  const double below_all = -std::numeric_limits<double>::infinity();
  if (given("mean")) {
    const auto mean = arg::numbers("mean", d["mean"], 3, below_all, false);
    std::copy(mean.begin(), mean.end(), o.mean.begin());
  }
  if (given("std")) {
    const auto deviation = arg::numbers("std", d["std"], 3, 0.0, false);
    std::copy(deviation.begin(), deviation.end(), o.std.begin());
  }
  if (given("dtype")) {
    o.dtype = dtype_named(arg::choice("dtype", d["dtype"], {"float32", "float16", "uint8"}));
  }
  if (given("layout")) {
    o.layout = *parse_layout(arg::choice("layout", d["layout"], {"CHW", "HWC"}));
  }
  if (given("antialias")) o.antialias = arg::boolean("antialias", d["antialias"]);
  if (given("dct_scaling")) o.dct_scaling = arg::boolean("dct_scaling", d["dct_scaling"]);
  return o;
}

}  // namespace stoker::python
