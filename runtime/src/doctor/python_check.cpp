// Whether torch, numpy and PIL come from one place. Mixing a pip wheel with a Debian
// package (or a venv with the system's) pairs libraries built against different ABIs and
// brings two OpenMP runtimes that each start a thread per core: crashes, or loaders that
// fight for the CPUs.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/doctor/doctor.hpp"

extern char** environ;

namespace stoker::doctor {

namespace {

// Prints "module<TAB>origin" per module, "-" when not installed; importing nothing.
constexpr const char* kScript =
    "import importlib.util, sys\n"
    "for m in sys.argv[1:]:\n"
    "    try:\n"
    "        s = importlib.util.find_spec(m)\n"
    "        o = s.origin if s and s.origin else '-'\n"
    "    except Exception:\n"
    "        o = '-'\n"
    "    print(m + '\\t' + o)\n";

constexpr int kTimeoutMs = 30000;

// Runs argv[0] (searched in PATH) and returns its stdout; throws when it cannot be run,
// fails, or outlives kTimeoutMs.
std::string run_capture(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw Error("pipe", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw Error(args[0], std::string("cannot run it: ") + std::strerror(rc),
                "install python3 or name the interpreter with $PYTHON");
  }
  std::string out;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
  bool timed_out = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd p{fds[0], POLLIN, 0};
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) == 0) {
      timed_out = true;
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    throw Error(args[0], "did not answer within " + std::to_string(kTimeoutMs / 1000) + " s",
                "check the interpreter (a site hook that hangs?)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error(args[0], "failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")",
                "run it by hand to see why, or name another interpreter with $PYTHON");
  return out;
}

}  // namespace

std::map<std::string, std::optional<std::string>> python_module_files(
    const std::string& python, const std::vector<std::string>& modules) {
  std::vector<std::string> args{python, "-c", kScript};
  args.insert(args.end(), modules.begin(), modules.end());
  std::map<std::string, std::optional<std::string>> files;
  for (const std::string& m : modules) files[m] = std::nullopt;
  std::istringstream in(run_capture(args));
  std::string line;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    std::string name = line.substr(0, tab), origin = line.substr(tab + 1);
    if (files.count(name) && origin != "-") files[name] = origin;
  }
  return files;
}

PackageRoot package_root(const std::string& module_file) {
  for (const char* dir : {"/dist-packages/", "/site-packages/"}) {
    size_t at = module_file.rfind(dir);
    if (at == std::string::npos) continue;
    std::string root = module_file.substr(0, at + std::strlen(dir) - 1);
    std::string kind;
    if (root == "/usr/lib/python3/dist-packages")
      kind = "Debian package";
    else if (root.find("/.local/lib/") != std::string::npos)
      kind = "pip --user";
    else if (std::strcmp(dir, "/dist-packages/") == 0)
      kind = "pip, system Python";
    else if (root.find("conda") != std::string::npos)
      kind = "conda";
    else
      kind = "pip or a virtualenv";
    return {root, kind};
  }
  // Elsewhere (PYTHONPATH, a source tree): the folder holding the package or module.
  std::filesystem::path p(module_file);
  std::filesystem::path dir = p.parent_path();
  if (p.filename() == "__init__.py") dir = dir.parent_path();
  return {dir.string(), "PYTHONPATH or a source tree"};
}

Finding check_python_sources(const std::map<std::string, std::optional<std::string>>& files) {
  std::set<std::string> roots;
  std::vector<std::string> where, missing;
  for (const auto& [module, file] : files) {
    if (!file) {
      missing.push_back(module);
      continue;
    }
    PackageRoot r = package_root(*file);
    roots.insert(r.path);
    where.push_back(module + " from " + r.path + " (" + r.kind + ")");
  }
  Finding f{"python", Severity::Ok, "", ""};
  if (roots.size() > 1) {
    f.severity = Severity::Warn;
    f.message =
        "modules come from " + std::to_string(roots.size()) + " places: " + join(where, "; ");
    f.fix =
        "install torch, numpy and Pillow the same way (all pip in one virtualenv, or all "
        "Debian packages: apt install python3-torch python3-numpy python3-pil)";
  } else if (!missing.empty()) {
    f.severity = Severity::Info;
    f.message =
        "not installed: " + join(missing, "; ") + (where.empty() ? "" : "; " + join(where, "; "));
  } else {
    f.message = "all from one place: " + join(where, "; ");
  }
  return f;
}

}  // namespace stoker::doctor
