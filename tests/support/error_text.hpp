// The message of the stoker::Error a test's call throws, or "(no error)".
#pragma once

#include <functional>
#include <string>

#include "stoker/common/error.hpp"

namespace stoker::test {

inline std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace stoker::test
