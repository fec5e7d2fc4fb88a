#include "stats_dict.hpp"

#include <pybind11/stl.h>

namespace py = pybind11;

namespace stoker::python {

py::dict stats_dict(const LoaderStats& s) {
  py::dict stages;
  stages["read_ns"] = s.stages.read_ns;
  stages["decode_ns"] = s.stages.decode_ns;
  stages["transform_ns"] = s.stages.transform_ns;
  stages["collate_ns"] = s.stages.collate_ns;

  py::list history;
  for (const DepthChange& c : s.depth_history) {
    py::dict h;
    h["time_ns"] = c.time_ns;
    h["batch"] = c.batch;
    h["from"] = c.from;
    h["to"] = c.to;
    h["reason"] = std::string(to_string(c.reason));
    h["wait_ns"] = c.wait_ns;
    h["text"] = c.describe();
    history.append(h);
  }
  py::list first;
  for (const EpochFirstBatch& e : s.epoch_first_batch) {
    py::dict f;
    f["epoch"] = e.epoch;
    f["wait_ns"] = e.wait_ns;
    first.append(f);
  }

  py::dict d;
  d["stages"] = stages;
  d["produce_ns"] = s.produce_ns;
  d["consumer_wait_ns"] = s.consumer_wait_ns;
  d["wall_ns"] = s.wall_ns;
  d["wait_share"] = s.wait_share;
  d["samples"] = s.samples;
  d["batches"] = s.batches;
  d["bytes"] = s.bytes;
  d["skipped"] = s.skipped;
  d["decode_warnings"] = s.decode_warnings;
  d["skipped_files"] = s.skipped_files;
  d["discarded_batches"] = s.discarded_batches;
  py::dict reads;  // a streamed source's reads of shard files
  reads["reads"] = s.stream_reads.reads;
  reads["bytes"] = s.stream_reads.bytes;
  reads["largest"] = s.stream_reads.largest;
  d["stream_reads"] = reads;
  d["workers"] = s.workers;
  d["threads_created"] = s.threads_created;
  d["depth"] = s.depth;
  d["max_depth"] = s.max_depth;
  d["slots"] = s.slots;
  d["slot_bytes"] = s.slot_bytes;
  d["arena_bytes"] = s.arena_bytes;
  d["mem_budget"] = s.mem_budget;
  d["numa_bound"] = s.numa_bound;
  d["pinned"] = s.pinned;
  d["adaptive"] = s.adaptive;
  d["depth_history"] = history;
  d["producer_bound_waits"] = s.producer_bound_waits;
  d["epoch_first_batch"] = first;
  d["notes"] = s.notes;
  d["agreement"] = s.agreement;
  d["summary"] = s.summary();
  return d;
}

}  // namespace stoker::python
