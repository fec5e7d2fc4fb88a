// What the loader hands out: a Batch of the host arena (and BatchShape, what a Batch and a
// DeviceBatch both describe). Below the façade (loader.hpp), so that the loader's own parts
// include it without the façade.
//
// Implemented in src/loader/: loader.cpp (a Batch's moves and release).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "stoker/sources/sample_spec.hpp"

namespace stoker {

class LoaderCore;

// What a host Batch and a DeviceBatch (cuda_feeder.hpp) both describe: how many samples,
// of what shape, their labels, and where in the epoch they come from. Each is filled and
// moved as one value.
class BatchShape {
 public:
  const SampleSpec& spec() const { return *shape_.spec; }
  size_t size() const { return shape_.size; }          // samples in this batch
  size_t capacity() const { return shape_.capacity; }  // the batch size
  size_t bytes() const { return shape_.size * shape_.spec->bytes(); }
  // size() labels (host or device); null when the batch was mixed (soft_labels()).
  const int64_t* labels() const { return shape_.labels; }
  // A mixed batch's targets (LoaderOptions::mix): size() rows of label_classes() float32;
  // else null and 0.
  const float* soft_labels() const { return shape_.soft_labels; }
  size_t label_classes() const { return shape_.classes; }
  const void* label_data() const {
    return shape_.soft_labels ? static_cast<const void*>(shape_.soft_labels) : shape_.labels;
  }
  uint64_t epoch() const { return shape_.epoch; }
  uint64_t number() const { return shape_.number; }  // batch number within the epoch

 protected:
  struct Fields {
    const int64_t* labels = nullptr;
    const SampleSpec* spec = nullptr;
    size_t size = 0, capacity = 0;
    uint64_t epoch = 0, number = 0;
    const float* soft_labels = nullptr;
    size_t classes = 0;
  };
  Fields shape_;
};

// One batch: views of the slot's memory, valid until the Batch is destroyed or released
// (then the slot returns to the pool). Move-only; may outlive its loop iteration and
// even the Loader.
class Batch : public BatchShape {
 public:
  Batch() = default;
  Batch(Batch&& o) noexcept;
  Batch& operator=(Batch&& o) noexcept;
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;
  ~Batch() { release(); }

  explicit operator bool() const { return core_ != nullptr; }
  void release();  // returns the slot now (idempotent)

  // Sample data: size() samples of spec().bytes() each, contiguous, 64-byte aligned.
  const std::byte* data() const { return data_; }
  std::byte* data() { return data_; }
  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(data_), bytes() / sizeof(T)};
  }
  std::span<const int64_t> label_span() const { return {labels(), labels() ? size() : 0}; }
  std::span<const uint64_t> indices() const { return {indices_, size()}; }  // dataset indices
  int slot() const { return slot_; }  // arena slot (for a device feeder's map)

 private:
  friend class LoaderCore;
  void clear();  // forgets the slot without returning it
  std::shared_ptr<LoaderCore> core_;
  int slot_ = -1;
  std::byte* data_ = nullptr;
  const uint64_t* indices_ = nullptr;
};

}  // namespace stoker
