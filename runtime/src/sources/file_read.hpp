// What the file-backed sources share: reading a byte range with pread into the worker's
// scratch (no allocation once the scratch is large enough), and (common/fnv1a.hpp) the
// hash their fingerprints are built from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "common/fnv1a.hpp"
#include "stoker/sources/source.hpp"

namespace stoker {

// Reads `size` bytes at `offset` of `path` into `scratch`. Throws SampleError (with
// `index`, and "PATH" or "PATH@OFFSET" as location) when the file cannot be opened or
// read, or ends early.
// The status of a dataset path the user named (following links). Throws stoker::Error
// naming it: "no such MISSING" (with `todo`) only when it does not exist; the file
// system's own reason otherwise (a name too long, a link loop, a file where a folder
// should be, a permission), so the hint is true for it.
std::filesystem::file_status dataset_path_status(const std::string& path, const char* missing,
                                                 const char* todo);

// The files of the dataset folder `folder` whose names `wanted` takes, sorted: links are
// followed, a dangling link is passed over, and an entry whose type cannot be read (a link to
// itself) or a folder that cannot be read is an Error naming it. A dataset's folder of token
// files or tar shards is listed so.
std::vector<std::string> folder_files(const std::string& folder,
                                      const std::function<bool(const std::string&)>& wanted);

// What to do about a filesystem error met on a dataset path: one hint per cause (a link
// loop, a permission, a name too long, a file where a folder should be, a link to nothing,
// a filesystem that failed to answer), so that no error gets another cause's hint.
std::string fs_error_hint(const std::error_code& ec);

std::span<const std::byte> pread_sample(const char* path, uint64_t offset, uint64_t size,
                                        uint64_t index, std::vector<std::byte>& scratch);

// A whole file (an image of a folder, listed without its size): its size from fstat on the
// descriptor just opened (the open already fetched the file's attributes, so on a network
// filesystem this asks the server nothing more), then read to its end, also when it grew
// meanwhile. One pread a file when it keeps its size: the read asks for one byte more to see
// the end. Throws SampleError as pread_sample.
std::span<const std::byte> read_file_sample(const char* path, uint64_t index,
                                            std::vector<std::byte>& scratch);

}  // namespace stoker
