// The objects a C interface handle stands for.
#pragma once

#include <memory>
#include <mutex>

#include "capi.hpp"
#include "stoker/common/fork_check.hpp"
#include "stoker/distributed/sampler.hpp"
#include "stoker/loader/host_pinner.hpp"
#include "stoker/loader/loader.hpp"
#include "stoker/plan/plan.hpp"
#include "stoker/sources/image_source.hpp"

namespace stoker::capi {

struct PlanObject : stoker_object {
  explicit PlanObject(Plan p) : plan(std::move(p)) {}
  Plan plan;
};

struct SamplerObject : stoker_object {
  explicit SamplerObject(DistributedSampler s) : sampler(std::move(s)) {}
  DistributedSampler sampler;
};

// An image folder listed once for the job (rank 0's, or the one it sent), to open a loader on.
struct FolderObject : stoker_object {
  explicit FolderObject(std::shared_ptr<const ImageFolderSource> f) : folder(std::move(f)) {}
  std::shared_ptr<const ImageFolderSource> folder;
};

struct PinnerObject : stoker_object {
  explicit PinnerObject(std::shared_ptr<HostPinner> p) : pinner(std::move(p)) {}
  std::shared_ptr<HostPinner> pinner;
};

// A loader and its consumer lock: one call on it at a time, whatever threads the caller runs
// (a slice of stoker_loader_next holds it for at most its limit).
struct LoaderObject : stoker_object {
  ForkCheck made_in;
  std::mutex mu;
  std::unique_ptr<Loader> loader;  // null once closed
  // The loader, or ValueError when it was closed.
  Loader& get();
};

}  // namespace stoker::capi
