// Text shared by the sampler's messages (implemented in sampler_state.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace stoker::distributed {

std::string hex64(uint64_t v);  // "0x00000000deadbeef", as fingerprints are printed

// Throws the error for a state written in another format version.
[[noreturn]] void unreadable_version(uint64_t version);

}  // namespace stoker::distributed
