// stoker::Error: the one exception type thrown at API boundaries.
// It carries what went wrong, where (the input: a file, flag, variable), and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace stoker {

class Error : public std::runtime_error {
 public:
  // where: the input at fault ("profiles.conf:3:14", "--gpus", "STOKER_WORKERS").
  // what: what is wrong with it. todo: what the user can do about it (may be empty).
  Error(std::string where, std::string what, std::string todo = {});

  const std::string& where() const { return where_; }
  const std::string& problem() const { return what_; }
  const std::string& todo() const { return todo_; }

 private:
  std::string where_, what_, todo_;
};

}  // namespace stoker
