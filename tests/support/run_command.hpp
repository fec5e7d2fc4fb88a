// Running a built program from a test (the `stoker` command, the trainer): its standard
// output (append " 2>&1" to the command for stderr too) and its exit status.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace stoker::test {

struct CommandResult {
  int status = -1;  // the exit status; -1 when the command could not run or was killed
  std::string out;
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The `stoker` command of this build.
inline std::string stoker_cli() {
  return std::string(STOKER_BINARY_DIR) + "/runtime/stoker";
}

}  // namespace stoker::test
