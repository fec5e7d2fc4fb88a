// _Sampler: the C++ DistributedSampler behind stoker.DistributedSampler (the permutation,
// the shard rule and the elastic resume stay in C++), plus the world and the pieces of the
// epoch agreement that the Python module's torch.distributed path shares with MPI's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "state_dict.hpp"
#include "stoker/common/error.hpp"
#include "stoker/distributed/agreement.hpp"
#include "stoker/distributed/shared_listing.hpp"
#include "stoker/distributed/world.hpp"

namespace py = pybind11;

namespace stoker::python {

py::dict state_dict_of(const SamplerState& s) {
  py::dict d;
  d["sampler"] = s.to_string();
  d["epoch"] = s.epoch;
  d["consumed"] = s.consumed;
  d["size"] = s.size;
  d["seed"] = s.seed;
  return d;
}

SamplerState parse_state_text(const std::string& text) {
  try {
    return SamplerState::parse(text);
  } catch (const Error& e) {
    throw py::value_error(std::string("state_dict['sampler']: ") + e.what());
  }
}

namespace {

DistributedSampler make_sampler(uint64_t size, uint64_t world_size, uint64_t rank, bool shuffle,
                                uint64_t seed, bool drop_last, uint64_t fingerprint) {
  SamplerOptions o;
  o.fingerprint = fingerprint;
  o.size = size;
  o.world_size = world_size;
  o.rank = rank;
  o.shuffle = shuffle;
  o.seed = seed;
  o.drop_last = drop_last;
  return DistributedSampler(o);
}

// Indices first..first+count of the shard (a chunk: iteration never holds the whole shard).
std::vector<uint64_t> indices(const DistributedSampler& s, uint64_t first, uint64_t count) {
  std::vector<uint64_t> out;
  const uint64_t end = std::min(s.length(), first + count);
  out.reserve(end > first ? end - first : 0);
  for (uint64_t i = first; i < end; ++i) out.push_back(s.at(i));
  return out;
}

void bind_agreement(py::module_& m) {
  m.def("world", [] {
    const World w = detect_world();
    py::dict d;
    d["rank"] = w.rank;
    d["world_size"] = w.world_size;
    d["local_rank"] = w.local_rank;
    d["local_size"] = w.local_size;
    d["mpi"] = w.mpi;
    d["source"] = w.source;
    return d;
  });
  // The launcher's variables alone (no MPI call), for comparing with a torch.distributed
  // group (stoker/_world.py).
  m.def("launch_world", [] {
    const Ranks r = launch_ranks(process_env());
    py::dict d;
    d["rank"] = r.rank;
    d["world_size"] = r.world_size;
    d["source"] = r.source;
    return d;
  });
  m.def("seed_from_environment", &seed_from_environment, py::arg("fallback"));
  m.def(
      "check_epoch_views",
      [](const std::vector<std::vector<uint64_t>>& words, bool seeds_must_match) {
        std::vector<EpochView> views;
        for (const auto& w : words) views.push_back(view_from_words(w));
        check_epoch_views(views, seeds_must_match ? SeedRule::must_match : SeedRule::take_rank0);
      },
      py::arg("views"), py::arg("seeds_must_match"));
  m.def("agree_wait", [] {
    const AgreeWait w = agree_wait_from_environment();
    return py::make_tuple(w.warn.count(), w.timeout.count());
  });
  m.def("agree_waiting_line",
        [](uint64_t rank, uint64_t epoch, const std::string& missing, int64_t waited) {
          return agree_waiting_line(rank, epoch, missing, std::chrono::seconds(waited),
                                    agree_wait_from_environment());
        });
  m.def("agree_timeout_text", [](uint64_t epoch, const std::string& missing) {
    return agree_timeout_text(epoch, missing, agree_wait_from_environment());
  });
  m.def("listing_waiting_line", [](uint64_t rank, const std::string& root, int64_t waited) {
    return listing_waiting_line(rank, root, std::chrono::seconds(waited),
                                agree_wait_from_environment());
  });
  m.def("listing_timeout_text", [](const std::string& root) {
    return listing_timeout_text(root, agree_wait_from_environment());
  });
  m.def("shared_listing_error",
        [](const std::string& what) { return py::bytes(shared_listing_error(what)); });
  m.def("rank_list", &rank_list, py::arg("ranks"));
  m.def("note_unchecked_ranks", &note_unchecked_ranks, py::arg("rank"), py::arg("world_size"));
}

}  // namespace

void bind_sampler(py::module_& m) {
  py::class_<DistributedSampler>(m, "_Sampler")
      .def(py::init(&make_sampler), py::arg("size"), py::arg("world_size"), py::arg("rank"),
           py::arg("shuffle"), py::arg("seed"), py::arg("drop_last"), py::arg("fingerprint") = 0)
      .def("copy", [](const DistributedSampler& s) { return s; })
      .def("set_epoch", &DistributedSampler::set_epoch, py::arg("epoch"))
      .def_property_readonly("epoch", &DistributedSampler::epoch)
      .def_property_readonly("length", &DistributedSampler::length)
      .def_property_readonly("start", &DistributedSampler::start)
      .def_property_readonly("seed", [](const DistributedSampler& s) { return s.options().seed; })
      .def_property_readonly("fingerprint",
                             [](const DistributedSampler& s) { return s.options().fingerprint; })
      .def("indices", &indices, py::arg("first"), py::arg("count"))
      .def("order", &DistributedSampler::order, py::arg("position"))
      .def(
          "state",
          [](const DistributedSampler& s, uint64_t local) { return state_dict_of(s.state(local)); },
          py::arg("local_consumed"))
      .def(
          "restore",
          [](DistributedSampler& s, const std::string& text) { s.restore(parse_state_text(text)); },
          py::arg("text"))
      .def(
          "view",
          [](const DistributedSampler& s, uint64_t comm_rank) {
            return to_words(epoch_view(s.options(), s.epoch(), comm_rank));
          },
          py::arg("comm_rank"))
      // agree_on_epoch over MPI (rank 0's seed); waits without the GIL.
      .def("agree_mpi", [](const DistributedSampler& s) {
        py::gil_scoped_release nogil;
        return agree_on_epoch(s.options(), s.epoch());
      });
  bind_agreement(m);
}

}  // namespace stoker::python
