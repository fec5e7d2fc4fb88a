#include "py_pinner.hpp"

#include <cstdint>
#include <string>

#include "stoker/common/fork_check.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {

// False while Python shuts down: taking the GIL then would hang (or end) the calling
// thread, and the process is about to drop its CUDA registrations with its memory anyway.
bool interpreter_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() != 0 && Py_IsFinalizing() == 0;
#else
  return Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0;
#endif
}

// "RuntimeError: text" of the exception being handled (one line, no traceback: it is a note).
std::string exception_text(const py::error_already_set& e) {
  std::string type = py::str(e.type().attr("__name__"));
  std::string text = py::str(e.value());
  return text.empty() ? type : type + ": " + text;
}

class PyPinner final : public HostPinner {
 public:
  PyPinner(py::object pin, py::object unpin, std::string description)
      : pin_(std::move(pin)), unpin_(std::move(unpin)), description_(std::move(description)) {}

  // The callables are Python objects: dropping them needs the GIL, and the last owner of
  // the arena (hence of this pinner) may be a worker thread.
  ~PyPinner() override {
    if (!interpreter_alive() || made_in_.forked()) {
      pin_.release();  // leaked on purpose: no GIL to be had
      unpin_.release();
      return;
    }
    py::gil_scoped_acquire gil;
    pin_ = py::object();
    unpin_ = py::object();
  }

  bool pin(void* base, size_t bytes, std::string* why) override {
    py::gil_scoped_acquire gil;  // the loader calls this from its constructor, GIL released
    try {
      py::object result = pin_(reinterpret_cast<uintptr_t>(base), bytes);
      if (result.is_none()) return true;
      const long long code = py::int_(result);
      if (code == 0) return true;
      *why = "returned error code " + std::to_string(code);
    } catch (py::error_already_set& e) {
      *why = exception_text(e);
    }
    return false;
  }

  void unpin(void* base, size_t) noexcept override {
    if (!interpreter_alive() || made_in_.forked()) return;
    py::gil_scoped_acquire gil;
    try {
      unpin_(reinterpret_cast<uintptr_t>(base));
    } catch (py::error_already_set& e) {
      // Nothing to do about it here (the memory is freed next); say so like a __del__ would.
      e.discard_as_unraisable("stoker.Loader unpinning its batch slots");
    } catch (...) {
    }
  }

  std::string describe() const override { return description_; }

 private:
  py::object pin_, unpin_;
  std::string description_;
  ForkCheck made_in_;
};

}  // namespace

std::shared_ptr<HostPinner> python_pinner(const py::tuple& spec) {
  if (spec.size() != 3) throw py::type_error("pinner: expected (pin, unpin, description)");
  return std::make_shared<PyPinner>(spec[0], spec[1], py::cast<std::string>(spec[2]));
}

}  // namespace stoker::python
