// A transform turns one raw sample into one fixed-size output sample, written in
// place into the batch slot (collate in place). Every random choice it makes must
// depend only on SampleKey (seed, epoch, sample index, repetition), never on the worker.
//
// Implemented in src/transforms/: stage_times.cpp (StageTimes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stoker/sources/sample_spec.hpp"
#include "stoker/sources/source.hpp"

namespace stoker {

struct SampleKey {
  uint64_t seed = 0, epoch = 0, index = 0;
  // Which copy of the sample this is under repeated augmentation (sampler.hpp: ra_reps),
  // so that the copies draw apart; 0 leaves every draw as it was before repetition.
  uint64_t repetition = 0;
};

// Nanoseconds spent per stage, accumulated by a worker.
struct StageTimes {
  uint64_t read_ns = 0, decode_ns = 0, transform_ns = 0, collate_ns = 0;
  StageTimes& operator+=(const StageTimes& o);
};

// Per-worker reusable buffers: grown on first use, then reused (no steady-state allocation).
struct Scratch {
  std::vector<std::byte> read;     // the source's scratch
  std::vector<std::byte> decoded;  // decoder output
  std::vector<std::byte> work;     // resize / intermediate
  std::vector<float> f32;
  std::vector<std::byte> augment;  // the crop's bytes and a spare, when augmented
};

class Transform {
 public:
  virtual ~Transform() = default;
  virtual SampleSpec output_spec() const = 0;
  // Writes output_spec().bytes() bytes at `out`. Throws SampleError for bad input.
  virtual void apply(const RawSample& in, const SampleKey& key, std::byte* out, Scratch& scratch,
                     StageTimes& times) const = 0;
  virtual std::string describe() const = 0;
};

}  // namespace stoker
