// A scratch directory tree for tests that fake /proc and /sys files; removed at scope exit.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace stoker::test {

class TempTree {
 public:
  TempTree() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "stoker-topo-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~TempTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::string& root() const { return root_; }
  std::string path(const std::string& rel) const { return root_ + "/" + rel; }
  // Writes `text` to root/rel, creating the folders above it.
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = path(rel);
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

 private:
  std::string root_;
};

}  // namespace stoker::test
