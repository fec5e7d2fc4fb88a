// `stoker bench`'s view of the reads a run makes: the kernel's counters, a streamed source's
// shard reads, and dropping the page cache for cold runs (--drop-cache).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "bench.hpp"
#include "stoker/sources/shard_stream.hpp"

namespace stoker::cli {

void drop_page_cache(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  auto drop = [](const fs::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      drop(p);
      continue;
    }
    for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
      if (e.is_regular_file()) drop(e.path());
    }
  }
}

IoCounters io_counters() {
  IoCounters c;
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return c;
  char key[32];
  unsigned long long v = 0;
  while (std::fscanf(f, "%31[^:]: %llu ", key, &v) == 2) {
    if (std::strcmp(key, "syscr") == 0) c.syscr = v;
    if (std::strcmp(key, "rchar") == 0) c.rchar = v;
    if (std::strcmp(key, "read_bytes") == 0) c.read_bytes = v;
  }
  std::fclose(f);
  return c;
}

nlohmann::json read_report(const IoCounters& a, const IoCounters& b, double wall,
                           const ReadCounters& stream) {
  return {{"io",
           {{"read_calls", b.syscr - a.syscr},
            {"read_calls_per_s", static_cast<double>(b.syscr - a.syscr) / wall},
            {"read_call_bytes", b.rchar - a.rchar},
            {"storage_read_bytes", b.read_bytes - a.read_bytes}}},
          {"stream_reads",
           {{"reads", stream.reads}, {"bytes", stream.bytes}, {"largest", stream.largest}}}};
}

void print_reads(const nlohmann::json& j) {
  const auto& io = j["io"];
  const auto& stream = j["stream_reads"];
  const double mib = 1 << 20;
  std::printf("  reads      %llu read() calls (%.0f/s) returning %.1f MiB, %.1f MiB from storage\n",
              io["read_calls"].get<unsigned long long>(), io["read_calls_per_s"].get<double>(),
              io["read_call_bytes"].get<double>() / mib,
              io["storage_read_bytes"].get<double>() / mib);
  const auto reads = stream["reads"].get<uint64_t>();
  if (reads > 0) {
    std::printf("  stream     %llu shard reads of %.2f MiB on average (largest %.2f MiB)\n",
                static_cast<unsigned long long>(reads),
                stream["bytes"].get<double>() / static_cast<double>(reads) / mib,
                stream["largest"].get<double>() / mib);
  }
}

}  // namespace stoker::cli
