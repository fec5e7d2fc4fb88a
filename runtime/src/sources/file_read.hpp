// What the file-backed sources share: reading a byte range with pread into the worker's
// scratch (no allocation once the scratch is large enough), and (common/fnv1a.hpp) the
// hash their fingerprints are built from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/fnv1a.hpp"
#include "stoker/sources/source.hpp"

namespace stoker {

// Reads `size` bytes at `offset` of `path` into `scratch`. Throws SampleError (with
// `index`, and "PATH" or "PATH@OFFSET" as location) when the file cannot be opened or
// read, or ends early.
std::span<const std::byte> pread_sample(const char* path, uint64_t offset, uint64_t size,
                                        uint64_t index, std::vector<std::byte>& scratch);

}  // namespace stoker
