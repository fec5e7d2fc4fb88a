// Images the decoders delivered although the library warned about their data, as PIL and
// djpeg deliver them (libjpeg-turbo's "Corrupt JPEG data: N extraneous bytes before
// marker", "premature end of data segment", a bad Huffman code, an odd progression). The
// count is per thread: the loader reads it before and after a sample's transform to count
// and name the samples that warned (stats()["decode_warnings"]).
//
// Implemented in src/transforms/: image_decoder.cpp.
#pragma once

#include <cstdint>
#include <string>

namespace stoker {

struct DecodeWarnings {
  uint64_t images = 0;  // images decoded with at least one warning, on this thread
  std::string last;     // the first warning of the latest such image
};

const DecodeWarnings& decode_warnings_on_this_thread();

}  // namespace stoker
