#include "stoker/loader/full_decode.hpp"

#include "stoker/error.hpp"
#include "transforms/jpeg_decoder.hpp"

namespace stoker {

void decode_full_image(std::span<const std::byte> file, std::vector<std::byte>& rgb) {
  thread_local JpegDecoder decoder;
  try {
    decoder.decode_full(file, 1, rgb);
  } catch (const JpegFailure& e) {
    throw Error("image of " + std::to_string(file.size()) + " bytes", e.what(), "give a JPEG file");
  }
}

}  // namespace stoker
