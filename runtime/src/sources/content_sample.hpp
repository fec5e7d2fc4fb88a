// The content part of a file-backed dataset's fingerprint: names and sizes alone miss a
// dataset rewritten in place (re-tokenized, re-encoded, regenerated with another seed),
// and a resume state saved on it would then be accepted and continue on other samples.
// Reading every byte at open costs minutes on a large set, so the sources hash a sample
// of the content of a bounded size instead: kContentBlocks blocks of kContentBlockBytes,
// at evenly spaced offsets of the dataset's bytes taken end to end (files in dataset
// order), the first and last block included. A dataset of at most
// kContentBlocks x kContentBlockBytes (4 MiB) is read whole. Cost at open: at most 1024
// preads of 4 KiB (4 MiB), in at most 1024 files, whatever the dataset's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

inline constexpr uint64_t kContentBlocks = 1024;
inline constexpr uint64_t kContentBlockBytes = 4096;

// `path` is the source's own string: it outlives content_sample_hash (a copy per file cost
// a million allocations on a cached open of a million-file folder).
struct ContentFile {
  const char* path = "";
  uint64_t size = 0;  // as the source saw it when it listed the file
};

// The hash of the sampled blocks of `files`, continuing from `h`. Throws stoker::Error
// naming the file when one cannot be opened or read, or is now shorter than `size`.
uint64_t content_sample_hash(const std::vector<ContentFile>& files, uint64_t h);

}  // namespace stoker
