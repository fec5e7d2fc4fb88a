// _Loader: the C++ Loader as seen from Python. Waiting for a batch releases the GIL, so
// Python threads (and the training step's own C++ ops) run while the workers fill slots.
// The wait is cut into slices: between two, the GIL is taken back and the interpreter's
// signal handlers run (PyErr_CheckSignals), so Ctrl-C and a SIGTERM handler that
// checkpoints act within a slice, not when the batch arrives.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <mutex>

#include "arguments.hpp"
#include "batch_views.hpp"
#include "bindings.hpp"
#include "loader_sources.hpp"
#include "options.hpp"
#include "state_dict.hpp"
#include "stats_dict.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/fork_check.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/loader/loader.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

// Thrown by the wait check after a signal handler asked for close() during next().
struct ClosedWhileWaiting {};

constexpr auto kWaitSlice = std::chrono::milliseconds(20);

class PyLoader {
 public:
  explicit PyLoader(LoaderParts parts) : parts_(std::move(parts)) {
    py::gil_scoped_release nogil;  // starting the workers may take a moment
    loader_ = Loader::for_this_process(parts_.source, parts_.transform, parts_.options);
    loader_->set_wait_check([this] { run_signal_handlers(); }, kWaitSlice);
  }

  // The next batch as views, or None at the end of the epoch (or when a signal handler
  // closed the loader while it waited). A Python exception from a signal handler
  // (KeyboardInterrupt, SystemExit) leaves it; the batch waited for is not lost.
  py::object next() {
    made_in_.check("stoker.Loader");  // before the lock: a parent's thread may hold it
    std::optional<Batch> batch;
    try {
      py::gil_scoped_release nogil;
      std::lock_guard lock(mutex_);  // one consumer at a time, whatever Python threads do
      Consuming consuming(*this);
      batch = get().next();
    } catch (const ClosedWhileWaiting&) {
      close();
      return py::none();
    }
    if (!batch) return py::none();
    return batch_views(std::move(*batch));
  }

  void start_epoch() {
    made_in_.check("stoker.Loader");
    py::gil_scoped_release nogil;
    std::lock_guard lock(mutex_);
    Consuming consuming(*this);
    get().start_epoch();
  }

  // Runs f on the loader under the consumer lock. The GIL is released while waiting for
  // the lock (next() may hold it for a while) and held again to run f.
  template <class F>
  auto locked(F f) {
    made_in_.check("stoker.Loader");
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

  // Stops and joins the workers now; batches still held by Python stay valid. After an
  // interrupted wait it does not wait for the samples in flight (see ~Loader). Called by a
  // signal handler while next() waits, it closes when next() returns (None). In a forked
  // child it only lets go of the parent's loader (which joins and locks nothing there).
  void close() {
    if (made_in_.forked()) {
      loader_.reset();
      return;
    }
    py::gil_scoped_release nogil;
    std::unique_ptr<Loader> dying;
    {
      std::lock_guard lock(mutex_);
      if (consuming_) {  // this thread, inside next(): the loader is in use below us
        close_asked_ = true;
        return;
      }
      dying = std::move(loader_);
    }
    dying.reset();
  }

  const LoaderParts& parts() const { return parts_; }

 private:
  // Marks this thread's next() or start_epoch() for the signal handlers it may run: the
  // mutex is recursive, so a handler on this thread gets through it (to checkpoint with
  // state_dict()), but must not start another consumer call under the running one.
  class Consuming {
   public:
    explicit Consuming(PyLoader& l) : l_(l) {
      if (l_.consuming_) {
        throw Error("stoker.Loader",
                    "was iterated from a signal handler while it waits for a batch",
                    "in the handler, save state_dict() or set a flag; leave the loop by raising "
                    "an exception (KeyboardInterrupt, SystemExit) or call close()");
      }
      l_.consuming_ = true;
    }
    ~Consuming() { l_.consuming_ = false; }
    Consuming(const Consuming&) = delete;
    Consuming& operator=(const Consuming&) = delete;

   private:
    PyLoader& l_;
  };

  // The wait check: the GIL back for the interpreter's signal handlers. Their exception
  // (KeyboardInterrupt, a handler's own) leaves next() as a Python error.
  void run_signal_handlers() {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (close_asked_) throw ClosedWhileWaiting{};
  }

  Loader& get() {
    if (!loader_) throw py::value_error("the loader was closed");
    return *loader_;
  }

  LoaderParts parts_;
  ForkCheck made_in_;
  std::recursive_mutex mutex_;
  std::unique_ptr<Loader> loader_;
  bool consuming_ = false, close_asked_ = false;  // guarded by mutex_
};

py::tuple spec_of(const SampleSpec& spec) {
  return py::make_tuple(std::string(to_string(spec.dtype)), spec.shape);
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
           [](PyLoader& l, py::handle epoch) {
             const auto e = arg::integer<uint64_t>("epoch", epoch, 0);
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
      .def(
          "state",
          [](PyLoader& l, uint64_t held_back) {
            return l.locked([&](Loader& x) { return state_dict_of(x.state(held_back)); });
          },
          py::arg("held_back") = 0)
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
