#include "options.hpp"

#include <pybind11/stl.h>

#include <set>
#include <string>

#include "py_pinner.hpp"
#include "stoker/plan/plan.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

struct DTypeName {
  DType type;
  const char* name;
};
constexpr DTypeName kDTypes[] = {{DType::U8, "uint8"},    {DType::U16, "uint16"},
                                 {DType::U32, "uint32"},  {DType::I64, "int64"},
                                 {DType::F16, "float16"}, {DType::F32, "float32"}};

// Refuses keys the converter does not know (a typo in the Python layer, not user input).
void check_keys(const py::dict& d, const std::set<std::string>& known, const char* what) {
  for (auto item : d) {
    auto key = py::cast<std::string>(item.first);
    if (!known.count(key)) throw py::type_error(std::string(what) + ": unknown option " + key);
  }
}

template <class T>
void take(const py::dict& d, const char* key, T& out) {
  if (d.contains(key) && !d[key].is_none()) out = py::cast<T>(d[key]);
}

}  // namespace

DType dtype_from_name(const std::string& name, const char* argument) {
  for (const auto& d : kDTypes)
    if (name == d.name) return d.type;
  throw py::value_error(std::string(argument) + "=" + name +
                        ": expected uint8, uint16, uint32, int64, float16 or float32");
}

const char* numpy_name(DType t) {
  for (const auto& d : kDTypes)
    if (d.type == t) return d.name;
  return "uint8";
}

LoaderOptions loader_options(const py::dict& d) {
  check_keys(d,
             {"batch_size", "drop_last", "shuffle", "seed", "world_size", "rank", "on_corrupt",
              "max_skip_fraction", "workers", "prefetch", "adaptive", "max_depth", "held_batches",
              "pin_threads", "pin_main_thread", "plan", "shuffle_buffer", "agree", "pinner"},
             "Loader");
  LoaderOptions o;
  take(d, "batch_size", o.batch_size);
  take(d, "drop_last", o.drop_last);
  take(d, "shuffle", o.shuffle);
  take(d, "seed", o.seed);
  take(d, "world_size", o.world_size);
  take(d, "rank", o.rank);
  take(d, "workers", o.workers);
  take(d, "prefetch", o.prefetch);
  take(d, "adaptive", o.adaptive);
  take(d, "max_depth", o.max_depth);
  take(d, "held_batches", o.held_batches);
  take(d, "pin_threads", o.pin_threads);
  take(d, "pin_main_thread", o.pin_main_thread);
  take(d, "shuffle_buffer", o.shuffle_buffer);
  take(d, "agree", o.agree);
  std::string corrupt = "error";
  take(d, "on_corrupt", corrupt);
  if (corrupt == "skip") {
    o.on_corrupt = CorruptPolicy::Skip;
  } else if (corrupt != "error") {
    throw py::value_error("on_corrupt=" + corrupt + ": expected 'error' or 'skip'");
  }
  take(d, "max_skip_fraction", o.max_skip_fraction);
  o.corrupt_names = {"on_corrupt='skip'", "max_skip_fraction"};
  if (d.contains("plan") && !d["plan"].is_none()) o.plan = py::cast<Plan>(d["plan"]);
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
  take(d, "train", o.train);
  take(d, "size", o.size);
  take(d, "resize_shorter", o.resize_shorter);
  std::pair<double, double> range;
  if (d.contains("scale") && !d["scale"].is_none()) {
    range = py::cast<std::pair<double, double>>(d["scale"]);
    o.scale_min = range.first;
    o.scale_max = range.second;
  }
  if (d.contains("ratio") && !d["ratio"].is_none()) {
    range = py::cast<std::pair<double, double>>(d["ratio"]);
    o.ratio_min = range.first;
    o.ratio_max = range.second;
  }
  take(d, "flip_p", o.flip_p);
  take(d, "mean", o.mean);
  take(d, "std", o.std);
  std::string text;
  if (d.contains("dtype") && !d["dtype"].is_none())
    o.dtype = dtype_from_name(py::cast<std::string>(d["dtype"]), "dtype");
  if (d.contains("layout") && !d["layout"].is_none()) {
    text = py::cast<std::string>(d["layout"]);
    if (text == "CHW") {
      o.layout = Layout::CHW;
    } else if (text == "HWC") {
      o.layout = Layout::HWC;
    } else {
      throw py::value_error("layout=" + text + ": expected 'CHW' or 'HWC'");
    }
  }
  take(d, "antialias", o.antialias);
  take(d, "dct_scaling", o.dct_scaling);
  return o;
}

}  // namespace stoker::python
