// Which file and tar-member names hold images, for every source that finds them by name
// (image folders, tar shards). The name only selects candidates: the decoder is chosen
// from the file's first bytes, never from its name.
#pragma once

#include <algorithm>
#include <cctype>
#include <string_view>

namespace stoker {

// a == b ignoring ASCII letter case ("JPEG" == "jpeg").
inline bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// An image extension, without the dot, in any letter case: jpg, jpeg, png, webp.
inline bool is_image_extension(std::string_view ext) {
  for (std::string_view known : {"jpg", "jpeg", "png", "webp"}) {
    if (equals_ignoring_case(ext, known)) return true;
  }
  return false;
}

// A name ending in an image extension ("n01440764_10026.JPEG", "000123.png").
inline bool has_image_extension(std::string_view name) {
  const size_t dot = name.rfind('.');
  return dot != std::string_view::npos && is_image_extension(name.substr(dot + 1));
}

}  // namespace stoker
