#include "stoker/common/error.hpp"

namespace stoker {

namespace {
std::string compose(const std::string& where, const std::string& what, const std::string& todo) {
  std::string s = where.empty() ? what : where + ": " + what;
  if (!todo.empty()) s += " (" + todo + ")";
  return s;
}
}  // namespace

Error::Error(std::string where, std::string what, std::string todo)
    : std::runtime_error(compose(where, what, todo)),
      where_(std::move(where)),
      what_(std::move(what)),
      todo_(std::move(todo)) {}

}  // namespace stoker
