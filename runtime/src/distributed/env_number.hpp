// Reading whole numbers from environment variables, with errors that name the variable.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stoker::distributed {

// nullptr -> nullopt; a whole number -> its value; anything else -> stoker::Error naming `name`.
std::optional<uint64_t> env_number(const char* name, const char* value);

}  // namespace stoker::distributed
