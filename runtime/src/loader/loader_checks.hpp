// The checks and conversions Loader's constructor and its factories (loader_open.cpp)
// share.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "stoker/distributed/sampler.hpp"
#include "stoker/loader/loader_options.hpp"
#include "stoker/sources/source.hpp"
#include "stoker/transforms/transform.hpp"

namespace stoker {

inline std::string bytes_text(uint64_t n) {
  return std::to_string(n) + " bytes";
}

// stoker::Error naming LoaderOptions::batch_size when it is 0.
void check_batch_size(const LoaderOptions& options);

// The checks both ways of making a loader share; returns the transform's output sample.
SampleSpec checked_spec(const std::shared_ptr<const Source>& source,
                        const std::shared_ptr<const Transform>& transform,
                        const LoaderOptions& options);

// The sampler the options and the source make; stoker::Error for a dataset without samples.
SamplerOptions sampler_options(const Source& source, const LoaderOptions& o);

}  // namespace stoker
