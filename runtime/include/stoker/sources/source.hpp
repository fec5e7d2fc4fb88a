// A source: random access to raw samples by index. read() is called from many
// worker threads at once, so it must be thread-safe and must not allocate in the
// steady state (it may grow the caller's scratch buffer).
//
// Header only: the interface every source implements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace stoker {

// A raw sample: bytes (a view into a mapping, or into the caller's scratch) and a label.
struct RawSample {
  std::span<const std::byte> bytes;
  int64_t label = 0;
};

// Thrown by sources and transforms for a corrupt or truncated sample; the loader
// applies its corrupt-sample policy (error or skip-and-count).
struct SampleError {
  uint64_t index = 0;
  std::string location;  // "FILE" or "FILE@OFFSET"
  std::string what;
};

class Source {
 public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  // Reads sample `index`. `scratch` belongs to the calling worker and is reused.
  // Throws SampleError for a corrupt/truncated sample.
  virtual RawSample read(uint64_t index, std::vector<std::byte>& scratch) const = 0;
  // Where sample `index` lives, for error messages ("dir/cls/x.jpg", "f.bin@4096").
  virtual std::string location(uint64_t index) const = 0;
  // A hash of the dataset's names and sizes (and, for file-backed sources, a sample of its
  // content), for the ranks to agree on and for a resume state to be checked against.
  virtual uint64_t fingerprint() const = 0;
  virtual std::string describe() const = 0;  // one line for bench output
  // The mean bytes read from storage per sample, as far as the source knows (0: unknown), for
  // the input bandwidth reports show.
  virtual double bytes_per_sample() const { return 0; }
};

}  // namespace stoker
