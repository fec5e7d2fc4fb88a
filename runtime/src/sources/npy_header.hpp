// The header of a numpy .npy file (format versions 1-3), as np.save writes it:
// "\x93NUMPY", two version bytes, the header's length, then a Python dict literal such as
// {'descr': '<u2', 'fortran_order': False, 'shape': (1000000,), }.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace stoker {

struct NpyHeader {
  std::string descr;               // '<u2', '<u4', ...
  std::optional<uint64_t> length;  // the shape's one dimension; nullopt when not 1-D
  bool fortran_order = false;
  uint64_t data_offset = 0;  // where the array's bytes start
};

// nullopt when `bytes` does not start with the .npy magic. Throws stoker::Error naming
// `path` when it does but the header is cut or malformed.
std::optional<NpyHeader> parse_npy_header(std::span<const std::byte> bytes,
                                          const std::string& path);

}  // namespace stoker
