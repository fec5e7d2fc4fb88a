#include "batch_views.hpp"

#include <pybind11/numpy.h>

#include <vector>

#include "stoker/sources/sample_spec.hpp"

namespace py = pybind11;

namespace stoker::python {

namespace {
std::vector<py::ssize_t> c_strides(const std::vector<py::ssize_t>& shape, size_t item) {
  std::vector<py::ssize_t> strides(shape.size());
  auto stride = static_cast<py::ssize_t>(item);
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}
}  // namespace

py::tuple batch_views(Batch batch) {
  auto* owned = new Batch(std::move(batch));
  // Runs with the GIL held when the last view dies; Batch::release() only returns the slot
  // (a short lock and a notify), so it never waits on the workers.
  py::capsule owner(owned, [](void* p) { delete static_cast<Batch*>(p); });
  const SampleSpec& spec = owned->spec();
  auto samples = static_cast<py::ssize_t>(owned->size());

  std::vector<py::ssize_t> shape{samples};
  for (int64_t d : spec.shape) shape.push_back(static_cast<py::ssize_t>(d));
  py::dtype dtype(to_string(spec.dtype));
  py::array data(dtype, shape, c_strides(shape, dtype.itemsize()), owned->data(), owner);
  // Labels and indices live in the slot too; the arrays are writable only because
  // torch.from_numpy warns about read-only ones (writing changes nothing but this batch).
  py::array labels(py::dtype::of<int64_t>(), {samples}, {py::ssize_t{8}},
                   const_cast<int64_t*>(owned->labels()), owner);
  py::array indices(py::dtype::of<uint64_t>(), {samples}, {py::ssize_t{8}},
                    const_cast<uint64_t*>(owned->indices().data()), owner);
  return py::make_tuple(data, labels, indices, owned->epoch(), owned->number());
}

}  // namespace stoker::python
