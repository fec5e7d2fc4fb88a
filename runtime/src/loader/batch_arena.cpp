#include "loader/batch_arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "stoker/common/cpuset.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/plan.hpp"
#include "topology/mem_policy.hpp"
#include "topology/process_hwloc.hpp"

namespace stoker {

namespace {

constexpr size_t kAlign = 64;

size_t align_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

}  // namespace

size_t BatchArena::slot_bytes_for(size_t batch_size, size_t sample_bytes, size_t label_bytes) {
  return align_up(batch_size * sample_bytes, kAlign) + align_up(batch_size * label_bytes, kAlign);
}

std::vector<int> BatchArena::nodes_for(const Plan& plan) {
  return plan.mem_bind == MemBind::None ? std::vector<int>{} : plan.numa;
}

BatchArena::BatchArena(int slots, size_t batch_size, size_t sample_bytes,
                       const std::vector<int>& numa, size_t label_bytes)
    : slots_(slots),
      data_bytes_(align_up(batch_size * sample_bytes, kAlign)),
      slot_bytes_(slot_bytes_for(batch_size, sample_bytes, label_bytes)) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bytes_ = align_up(slot_bytes_ * static_cast<size_t>(slots_), page);
  if (!numa.empty()) {
    if (hwloc_topology_t topo = process_hwloc()) {
      hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
      for (int os : numa) hwloc_bitmap_set(nodes, static_cast<unsigned>(os));
      const Placement where = placement(numa, bytes_);
      if (!where.note.empty()) notes_.push_back(where.note);
      const int flags = HWLOC_MEMBIND_BYNODESET | (where.strict ? HWLOC_MEMBIND_STRICT : 0);
      void* p = hwloc_alloc_membind(topo, bytes_, nodes, HWLOC_MEMBIND_BIND, flags);
      if (p == nullptr) {
        notes_.push_back(
            std::string("arena not bound to NUMA nodes: hwloc_alloc_membind failed (") +
            std::strerror(errno) + "); using first-touch placement");
      } else {
        base_ = static_cast<std::byte*>(p);
        numa_bound_ = true;
        from_hwloc_ = true;
      }
      hwloc_bitmap_free(nodes);
    } else {
      notes_.push_back("arena not bound to NUMA nodes: hwloc could not load the topology");
    }
  } else {
    notes_.push_back(
        "arena not bound to NUMA nodes: the plan names none; using first-touch placement");
  }
  if (base_ == nullptr) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      throw Error("batch arena",
                  "cannot allocate " + std::to_string(bytes_) + " bytes for " +
                      std::to_string(slots_) + " batch slots: " + std::strerror(errno),
                  "lower batch_size or the prefetch depth");
    }
    base_ = static_cast<std::byte*>(p);
  }
  // Large arenas: fewer TLB misses while collating (a hint; ignored where THP is off).
  if (bytes_ >= (size_t{2} << 20)) ::madvise(base_, bytes_, MADV_HUGEPAGE);
}

BatchArena::Placement BatchArena::placement(const std::vector<int>& numa, size_t bytes,
                                            const std::string& root) {
  bool known = false;
  const uint64_t room = numa_room(numa, &known, root);
  if (!known || room >= 2 * static_cast<uint64_t>(bytes)) return {true, {}};
  return {false, "arena prefers NUMA node(s) " + CpuSet::from_list(numa).to_string() +
                     " instead of being bound there: they have " + values::format_bytes(room) +
                     " free or reclaimable, under twice the arena's " +
                     values::format_bytes(bytes) + " (a strict binding could OOM-kill the rank)"};
}

BatchArena::~BatchArena() {
  if (pinner_) pinner_->unpin(base_, bytes_);
  if (from_hwloc_) {
    hwloc_free(process_hwloc(), base_, bytes_);
  } else {
    munmap(base_, bytes_);
  }
}

void BatchArena::touch_slot(int slot) const {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::byte* p = data(slot);
  for (size_t off = 0; off < slot_bytes_; off += page) p[off] = std::byte{0};
  p[slot_bytes_ - 1] = std::byte{0};
}

bool BatchArena::pin(const std::shared_ptr<HostPinner>& pinner) {
  std::string why;
  if (pinner->pin(base_, bytes_, &why)) {
    pinner_ = pinner;
    return true;
  }
  notes_.push_back("arena not page-locked (" + pinner->describe() + "): " + why);
  return false;
}

}  // namespace stoker
