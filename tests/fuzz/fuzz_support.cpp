#include "fuzz_support.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace stoker::fuzz {

namespace {

struct TempFolder {
  std::string path;
  TempFolder() {
    std::error_code ec;  // $TMPDIR, else /tmp
    const auto base = std::filesystem::temp_directory_path(ec);
    std::string pattern = (ec ? std::string("/tmp") : base.string()) + "/stoker-fuzz-XXXXXX";
    if (!mkdtemp(pattern.data())) finding("mkdtemp failed", pattern);
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

const std::string& temp_dir() {
  static const TempFolder folder;
  return folder.path;
}

std::string write_input(const std::string& name, std::span<const uint8_t> bytes) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) finding("cannot write the input file", path);
  return path;
}

void finding(const char* why, const std::string& message) {
  std::fprintf(stderr, "stoker fuzz finding: %s: '%s'\n", why, message.c_str());
  std::abort();
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace stoker::fuzz
