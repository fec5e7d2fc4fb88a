// The batch arena: every slot the loader will ever use, allocated once at construction
// as one region bound to the plan's NUMA nodes (hwloc), recycled for the loader's life.
// The binding is strict (MPOL_BIND on the region: the slots are what the GPU copies from,
// so they stay local, and the kernel reclaims local page cache rather than spill them),
// unless the nodes have less than twice the arena free or reclaimable: then the region only
// prefers them, with a note, since a strict binding on a full node OOM-kills the rank.
// Slot layout: [data: batch_size x sample_bytes, 64-byte aligned][labels: batch_size x
// label_bytes: int64 each, or a mixed batch's float32 rows of its classes].
// Pages are touched first by pinned worker threads (touch_slot), then the whole region
// may be page-locked through a HostPinner (the CUDA seam, see stoker/loader/host_pinner.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stoker/loader/host_pinner.hpp"

namespace stoker {

struct Plan;

class BatchArena {
 public:
  BatchArena(int slots, size_t batch_size, size_t sample_bytes, const std::vector<int>& numa,
             size_t label_bytes = sizeof(int64_t));
  ~BatchArena();
  BatchArena(const BatchArena&) = delete;
  BatchArena& operator=(const BatchArena&) = delete;

  // Bytes one slot takes for the given batch (data and labels, each 64-byte aligned).
  static size_t slot_bytes_for(size_t batch_size, size_t sample_bytes,
                               size_t label_bytes = sizeof(int64_t));

  // The NUMA nodes the plan's arena goes on: plan.numa, none under mem-bind=none.
  static std::vector<int> nodes_for(const Plan& plan);

  // How an arena of `bytes` on `numa` is placed: strictly, or (too little room on the
  // nodes, read from <root>/sys/devices/system/node) preferring them, with the note why.
  struct Placement {
    bool strict = true;
    std::string note;
  };
  static Placement placement(const std::vector<int>& numa, size_t bytes,
                             const std::string& root = "/");

  int slots() const { return slots_; }
  size_t slot_bytes() const { return slot_bytes_; }
  size_t bytes() const { return bytes_; }
  std::byte* data(int slot) const { return base_ + static_cast<size_t>(slot) * slot_bytes_; }
  std::byte* label_area(int slot) const { return data(slot) + data_bytes_; }
  int64_t* labels(int slot) const { return reinterpret_cast<int64_t*>(label_area(slot)); }
  // Writes every page of the slot, so it is placed by the calling (pinned) thread.
  void touch_slot(int slot) const;

  // Page-locks the arena once; returns false with a note when it cannot.
  bool pin(const std::shared_ptr<HostPinner>& pinner);

  bool numa_bound() const { return numa_bound_; }
  bool pinned() const { return pinner_ != nullptr; }
  const std::vector<std::string>& notes() const { return notes_; }  // why not bound / pinned

 private:
  int slots_ = 0;
  size_t data_bytes_ = 0, slot_bytes_ = 0, bytes_ = 0;
  std::byte* base_ = nullptr;
  bool numa_bound_ = false;
  bool from_hwloc_ = false;
  std::shared_ptr<HostPinner> pinner_;
  std::vector<std::string> notes_;
};

}  // namespace stoker
