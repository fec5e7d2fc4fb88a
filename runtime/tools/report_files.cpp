#include "report_files.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"

namespace stoker::cli {

namespace fs = std::filesystem;

namespace {

const char* kTodo = "give --log the plugin's job_log= (a file, or a folder of node files)";

// A log file in a folder: NAME.jsonl, or a rotated one (NAME.jsonl.1, NAME.jsonl.2.gz).
bool is_log_name(const std::string& name) {
  return name.front() != '.' && name.find(".jsonl") != std::string::npos;
}

// Unpacks `gz` into a new temporary file; returns its path.
std::string unpack(const std::string& gz) {
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);  // TMPDIR, else /tmp
  std::string path = (ec ? fs::path("/tmp") : tmp).string() + "/stoker-report-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0)
    throw Error(gz, "cannot be unpacked: no temporary file", "set TMPDIR to a writable folder");
  gzFile in = ::gzopen(gz.c_str(), "rb");
  std::FILE* out = ::fdopen(fd, "wb");
  bool ok = in && out;
  char buf[1 << 16];
  for (int n; ok && (n = ::gzread(in, buf, sizeof buf)) != 0;) {
    ok = n > 0 && std::fwrite(buf, 1, static_cast<size_t>(n), out) == static_cast<size_t>(n);
  }
  int err = Z_OK;
  if (in && ok) ::gzerror(in, &err);  // a stream cut short ends without a read error
  ok = ok && err == Z_OK;
  if (in) ::gzclose(in);
  if (out)
    ok = std::fclose(out) == 0 && ok;
  else
    ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw Error(gz, "cannot be unpacked (a damaged or cut .gz?)", kTodo);
  }
  return path;
}

}  // namespace

LogSet::LogSet(const std::vector<std::string>& args) : args_(args) {
  std::vector<std::string> names;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<std::string> inside;
      for (const fs::directory_entry& e : fs::directory_iterator(arg, ec)) {
        if (e.is_regular_file(ec) && is_log_name(e.path().filename().string()))
          inside.push_back(e.path().string());
      }
      if (ec) throw Error(arg, "cannot be read: " + ec.message(), kTodo);
      if (inside.empty())
        throw Error(arg, "holds no log file (NAME.jsonl, or a rotated one)", kTodo);
      std::sort(inside.begin(), inside.end());
      names.insert(names.end(), inside.begin(), inside.end());
    } else if (fs::is_regular_file(arg, ec)) {
      names.push_back(arg);
    } else {
      throw Error(arg, ec ? "cannot be read: " + ec.message() : "cannot be read", kTodo);
    }
  }
  try {
    uint64_t base = 0;
    for (const std::string& name : names) {
      LogFile f{name, name, base, 0};
      if (name.ends_with(".gz")) {
        f.path = unpack(name);
        unpacked_.push_back(f.path);
      }
      std::error_code ec;
      f.bytes = fs::file_size(f.path, ec);
      if (ec) throw Error(name, "cannot be read: " + ec.message(), kTodo);
      base += f.bytes;
      files_.push_back(std::move(f));
    }
  } catch (...) {
    for (const std::string& p : unpacked_) ::unlink(p.c_str());
    throw;
  }
}

LogSet::~LogSet() {
  for (const std::string& p : unpacked_) ::unlink(p.c_str());
}

std::string LogSet::describe() const {
  return join(args_, ", ");
}

}  // namespace stoker::cli
