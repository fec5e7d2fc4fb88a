// Helpers for the doctor tests: crafted file trees in a temporary folder, and RAII guards
// that set a real process condition (a limit, a mask, a variable) and restore it after.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "stoker/common/cpuset.hpp"
#include "stoker/topology/topology.hpp"

namespace stoker::test {

class DoctorDir {
 public:
  DoctorDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::path(::testing::TempDir()) /
            ("stoker_doctor_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  DoctorDir(const DoctorDir&) = delete;
  DoctorDir& operator=(const DoctorDir&) = delete;
  ~DoctorDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }
  std::string file(const std::string& rel) const { return (path_ / rel).string(); }
  // Writes `text` to `rel`, creating its folders.
  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

// Lowers RLIMIT_NOFILE's soft limit for the test's lifetime (raising it back is allowed:
// the hard limit is untouched).
class NofileGuard {
 public:
  explicit NofileGuard(rlim_t soft) {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit r = saved_;
    r.rlim_cur = soft;
    ok_ = setrlimit(RLIMIT_NOFILE, &r) == 0;
  }
  ~NofileGuard() { setrlimit(RLIMIT_NOFILE, &saved_); }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  bool ok_ = false;
};

// Binds the calling thread (the test's main thread) to `cpus` for the test's lifetime.
class MaskGuard {
 public:
  explicit MaskGuard(const CpuSet& cpus) : saved_(current_cpu_mask()) { ok_ = apply(cpus); }
  ~MaskGuard() { apply(saved_); }
  bool ok() const { return ok_; }

 private:
  static bool apply(const CpuSet& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus.list())
      if (c < CPU_SETSIZE) CPU_SET(c, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
  }
  CpuSet saved_;
  bool ok_ = false;
};

class EnvGuard {
 public:
  EnvGuard(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~EnvGuard() {
    if (saved_)
      setenv(name_, saved_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

}  // namespace stoker::test
