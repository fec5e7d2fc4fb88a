// Reading a sample's bytes when they may view a mapped file (token files, record files).
// A mapped file that shrinks while in use (rewritten in place, truncated) raises SIGBUS at
// the first touch of a page past its new end, and SIGBUS kills the process. These run the
// read under a per-thread recovery point: a SIGBUS inside the bytes being read becomes a
// stoker::Error naming the file. The handler is installed once (by the first mapping), and
// passes every other SIGBUS (an address outside the read in progress) to the handler that
// was there before it (or the default action: the process dies as it would have).
// Every transform that reads raw sample bytes of a mapped source should read them here;
// CopyTransform does.
#pragma once

#include <cstddef>
#include <span>

namespace stoker {

// std::memcpy(dst, src.data(), src.size()), or stoker::Error naming the file that shrank.
void copy_sample_bytes(std::byte* dst, std::span<const std::byte> src);

// Calls read(src.data(), src.size(), context) under the recovery point. `read` is left by
// a jump when the file shrank, so it must hold nothing that needs a destructor (plain loops
// over the bytes, as a widening copy).
void read_sample_bytes(std::span<const std::byte> src,
                       void (*read)(const std::byte* bytes, size_t n, void* context),
                       void* context);

}  // namespace stoker
