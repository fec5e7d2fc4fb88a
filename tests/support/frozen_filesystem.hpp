// A small ext4 filesystem on a loop device that a test freezes (fsfreeze): every write to it
// then waits in the kernel until it is thawed, as a process does on a network filesystem whose
// server stopped answering. Needs root, mkfs.ext4, fsfreeze and a loop device; why_not() says
// which is missing (the test skips with it). The image lives beside the mount point.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

namespace stoker::test {

class FrozenFilesystem {
 public:
  explicit FrozenFilesystem(std::filesystem::path mount_point)
      : mount_(std::move(mount_point)), image_(mount_.string() + ".img") {
    if (::geteuid() != 0) {
      why_not_ = "needs root (mount, fsfreeze)";
      return;
    }
    std::filesystem::create_directories(mount_);
    const std::string cmd = "truncate -s 16M '" + image_.string() + "' && mkfs.ext4 -q -F '" +
                            image_.string() + "' && mount -o loop '" + image_.string() + "' '" +
                            mount_.string() + "'";
    if (std::system((cmd + " >/dev/null 2>&1").c_str()) != 0) {
      why_not_ = "cannot make a loop-mounted ext4 filesystem here: " + cmd;
      std::filesystem::remove(image_);
      return;
    }
    mounted_ = true;
  }
  ~FrozenFilesystem() {
    thaw();
    if (mounted_) {
      // A writer that waited on the frozen filesystem finishes once thawed: give it a moment.
      const std::string umount = "umount '" + mount_.string() + "' 2>/dev/null";
      for (int i = 0; i < 100 && std::system(umount.c_str()) != 0; ++i) ::usleep(50000);
    }
    std::error_code ec;
    std::filesystem::remove(image_, ec);
  }
  FrozenFilesystem(const FrozenFilesystem&) = delete;
  FrozenFilesystem& operator=(const FrozenFilesystem&) = delete;

  bool ok() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  const std::filesystem::path& path() const { return mount_; }

  // Freezes it, and thaws it after `at_most` unless thaw() comes first: code that waits on
  // it for good (the fault under test, before its fix) fails the test instead of hanging it.
  void freeze(std::chrono::seconds at_most) {
    if (std::system(("fsfreeze -f '" + mount_.string() + "'").c_str()) != 0) return;
    frozen_ = true;
    watchdog_ = std::thread([this, at_most] {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, at_most, [this] { return !frozen_; });
      if (frozen_) unfreeze_locked();
    });
  }
  void thaw() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (frozen_) unfreeze_locked();
    }
    cv_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

 private:
  void unfreeze_locked() {
    (void)std::system(("fsfreeze -u '" + mount_.string() + "'").c_str());
    frozen_ = false;
  }

  std::filesystem::path mount_, image_;
  std::string why_not_;
  bool mounted_ = false;
  bool frozen_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread watchdog_;
};

}  // namespace stoker::test
