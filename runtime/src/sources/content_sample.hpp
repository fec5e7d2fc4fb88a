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
#include <functional>
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

// The content part for files listed without their sizes (an image folder: its walk stats no
// file). It reads up to kContentBlocks files at evenly spaced places in dataset
// order, the first and last included; of each, its size (fstat on the opened file) and its
// first and last kContentBlockBytes (the whole file when smaller). Cost at open: at most
// 1024 opens and 2048 preads of 4 KiB, whatever the dataset's size.
struct FilesSample {
  uint64_t hash = 0;
  uint64_t files = 0, bytes = 0;  // how many files were read, and their sizes' sum
  // The hash after each file read, in order (hash is the last): where two copies' chains
  // first differ is the first sampled file that differs.
  std::vector<uint64_t> chain;
};
// The k-th of the n files the sample reads out of `count` (evenly spaced, the first and
// last included).
uint64_t sampled_file(uint64_t k, uint64_t n, uint64_t count);
// path(i): the path of file i of `count`. Throws stoker::Error naming the file when one
// cannot be opened or read.
FilesSample sample_of_files(const std::function<const char*(uint64_t)>& path, uint64_t count,
                            uint64_t h);

}  // namespace stoker
