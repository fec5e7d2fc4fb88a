#include "stats_dict.hpp"

#include <pybind11/stl.h>

#include "stoker/loader/measure_values.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace stoker::python {

namespace {

py::object to_python(const MeasureValue& v) {
  return std::visit([](auto x) -> py::object { return py::cast(x); }, v);
}

// The lists that are no quantity: the controller's decisions and each epoch's first wait.
py::list depth_history(const LoaderStats& s) {
  py::list history;
  for (const DepthChange& c : s.depth_history) {
    history.append(py::dict("time_ns"_a = c.time_ns, "batch"_a = c.batch, "from"_a = c.from,
                            "to"_a = c.to, "reason"_a = std::string(to_string(c.reason)),
                            "wait_ns"_a = c.wait_ns, "text"_a = c.describe()));
  }
  return history;
}

py::list epoch_first_batch(const LoaderStats& s) {
  py::list first;
  for (const EpochFirstBatch& e : s.epoch_first_batch)
    first.append(py::dict("epoch"_a = e.epoch, "wait_ns"_a = e.wait_ns));
  return first;
}

}  // namespace

py::dict stats_dict(const LoaderStats& s) {
  py::dict d;
  // Every quantity of run_measures() that stats() shows, under its key (in its group's dict),
  // and under its old key too for one release.
  for (const MeasureRow& row : run_measures()) {
    if (!row.stats) continue;
    py::dict target = d;
    if (row.group) {
      if (!d.contains(row.group)) d[row.group] = py::dict();
      target = d[row.group].cast<py::dict>();
    }
    const py::object value = to_python(measure_value(s, row.id));
    target[row.stats] = value;
    if (row.old_stats) target[row.old_stats] = value;
  }
  d["skipped_files"] = s.skipped_files;
  d["depth_history"] = depth_history(s);
  d["epoch_first_batch"] = epoch_first_batch(s);
  d["notes"] = s.notes;
  d["agreement"] = s.agreement;
  d["summary"] = s.summary();
  return d;
}

}  // namespace stoker::python
