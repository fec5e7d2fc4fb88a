// _Loader: the C++ Loader as seen from Python. Waiting for a batch releases the GIL, so
// Python threads (and the training step's own C++ ops) run while the workers fill slots.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>

#include "batch_views.hpp"
#include "bindings.hpp"
#include "loader_sources.hpp"
#include "options.hpp"
#include "state_dict.hpp"
#include "stats_dict.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/error.hpp"
#include "stoker/loader/loader.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

class PyLoader {
 public:
  explicit PyLoader(LoaderParts parts) : parts_(std::move(parts)) {
    py::gil_scoped_release nogil;  // starting the workers may take a moment
    loader_ = Loader::for_this_process(parts_.source, parts_.transform, parts_.options);
  }

  // The next batch as views, or None at the end of the epoch.
  py::object next() {
    std::optional<Batch> batch;
    {
      py::gil_scoped_release nogil;
      std::lock_guard lock(mutex_);  // one consumer at a time, whatever Python threads do
      batch = get().next();
    }
    if (!batch) return py::none();
    return batch_views(std::move(*batch));
  }

  void start_epoch() {
    py::gil_scoped_release nogil;
    std::lock_guard lock(mutex_);
    get().start_epoch();
  }

  // Runs f on the loader under the consumer lock. The GIL is released while waiting for
  // the lock (next() may hold it for a while) and held again to run f.
  template <class F>
  auto locked(F f) {
    std::unique_lock lock(mutex_, std::defer_lock);
    {
      py::gil_scoped_release nogil;
      lock.lock();
    }
    return f(get());
  }

  void restore(const std::string& text) {
    const SamplerState state = parse_state_text(text);
    locked([&](Loader& l) {
      l.restore(state);
      return 0;
    });
  }

  // Stops and joins the workers now; batches still held by Python stay valid.
  void close() {
    py::gil_scoped_release nogil;
    std::unique_ptr<Loader> dying;
    {
      std::lock_guard lock(mutex_);
      dying = std::move(loader_);
    }
    dying.reset();
  }

  const LoaderParts& parts() const { return parts_; }

 private:
  Loader& get() {
    if (!loader_) throw py::value_error("the loader was closed");
    return *loader_;
  }

  LoaderParts parts_;
  std::mutex mutex_;
  std::unique_ptr<Loader> loader_;
};

py::tuple spec_of(const SampleSpec& spec) {
  return py::make_tuple(std::string(numpy_name(spec.dtype)), spec.shape);
}

}  // namespace

void bind_loader(py::module_& m) {
  py::class_<PyLoader>(m, "_Loader")
      .def(py::init([](const std::string& kind, const py::dict& source, const py::dict& loader) {
             return std::make_unique<PyLoader>(make_loader_parts(kind, source, loader));
           }),
           py::arg("kind"), py::arg("source"), py::arg("loader"))
      .def("next", &PyLoader::next)
      .def("start_epoch", &PyLoader::start_epoch)
      .def("set_epoch",
           [](PyLoader& l, uint64_t e) {
             return l.locked([e](Loader& x) {
               x.set_epoch(e);
               return 0;
             });
           })
      .def_property_readonly(
          "epoch", [](PyLoader& l) { return l.locked([](Loader& x) { return x.epoch(); }); })
      .def_property_readonly(
          "next_loop_epoch",
          [](PyLoader& l) { return l.locked([](Loader& x) { return x.next_loop_epoch(); }); })
      .def_property_readonly(
          "batches_per_epoch",
          [](PyLoader& l) { return l.locked([](Loader& x) { return x.batches_per_epoch(); }); })
      .def_property_readonly(
          "samples_per_epoch",
          [](PyLoader& l) { return l.locked([](Loader& x) { return x.length(); }); })
      .def_property_readonly(
          "rank",
          [](PyLoader& l) {
            return l.locked([](Loader& x) { return x.sampler().options().rank; });
          })
      .def_property_readonly(
          "world_size",
          [](PyLoader& l) {
            return l.locked([](Loader& x) { return x.sampler().options().world_size; });
          })
      .def_property_readonly(
          "depth", [](PyLoader& l) { return l.locked([](Loader& x) { return x.depth(); }); })
      .def_property_readonly(
          "plan", [](PyLoader& l) { return l.locked([](Loader& x) { return x.plan(); }); })
      .def_property_readonly(
          "plan_source",
          [](PyLoader& l) { return l.locked([](Loader& x) { return x.plan_source(); }); })
      .def_property_readonly(
          "spec", [](PyLoader& l) { return l.locked([](Loader& x) { return spec_of(x.spec()); }); })
      .def_property_readonly("dataset_size", [](PyLoader& l) { return l.parts().source->size(); })
      .def_property_readonly("describe",
                             [](PyLoader& l) {
                               const LoaderParts& p = l.parts();
                               return p.source->describe() +
                                      (p.transform ? " | " + p.transform->describe() : "");
                             })
      .def("state",
           [](PyLoader& l) { return l.locked([](Loader& x) { return state_dict_of(x.state()); }); })
      .def("restore", &PyLoader::restore, py::arg("text"))
      .def(
          "loop_view",
          [](PyLoader& l, uint64_t comm_rank) {
            return l.locked([comm_rank](Loader& x) {
              return to_words(epoch_view(x.sampler().options(), x.next_loop_epoch(), comm_rank));
            });
          },
          py::arg("comm_rank"))
      .def("stats",
           [](PyLoader& l) { return l.locked([](Loader& x) { return stats_dict(x.stats()); }); })
      .def("close", &PyLoader::close);
}

}  // namespace stoker::python
