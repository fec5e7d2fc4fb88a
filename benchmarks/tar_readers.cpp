// Speed per shard of the two ways to stream a tar shard (docs/architecture.md, "Tar shards:
// a hand-written reader, not libarchive"): stoker's own reader (TarShardSource streamed, one
// ShardCursor over the shard, every image copied into the sample buffer) and libarchive
// (archive_read_next_header + archive_read_data of every member into a buffer), over the
// same plain .tar, .tar.gz and .tar.zst shard of distinct JPEG members (640 x 480 synthetic
// images at quality 95, about 36 KB, each with its .cls), from the page cache. The two alternate
// within each round, so a loaded machine slows both alike; each line is one pass, MB/s of tar data
// (10^6 bytes of the decompressed shard per second).
//
//   build/benchmarks/tar_readers [--mib 64] [--rounds 5] [--dir DIR] [--keep 1]
//
// --keep 1 leaves the shards in DIR (shard.tar, .tar.gz, .tar.zst) and a later run with the
// same DIR reads them again instead of writing new ones: two builds compared on the same
// files.
//
// Built only where libarchive-dev is installed (the runtime does not link it).
#include <archive.h>
#include <archive_entry.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stoker/sources/tar_source.hpp"
#include "tar_writer.hpp"
#include "transforms/jpeg_encoder.hpp"

namespace {

using namespace stoker;

struct Pass {
  uint64_t members = 0, bytes = 0, sum = 0;  // what was read, to check both read the same
};

Pass read_stoker(const TarShardSource& src) {
  Pass p;
  std::vector<std::byte> bytes;
  int64_t label = 0;
  auto cursor = src.open_shard(0);
  while (cursor->next(&bytes, label)) {
    ++p.members;
    p.bytes += bytes.size();
    p.sum += static_cast<uint64_t>(bytes[bytes.size() / 2]) + static_cast<uint64_t>(label);
  }
  return p;
}

Pass read_libarchive(const std::string& path) {
  archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  if (archive_read_open_filename(a, path.c_str(), size_t{4} << 20) != ARCHIVE_OK) {
    throw std::runtime_error(path + ": " + archive_error_string(a));
  }
  Pass p;
  std::vector<char> buf;
  archive_entry* e = nullptr;
  while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
    const size_t n = static_cast<size_t>(archive_entry_size(e));
    buf.resize(n);
    size_t got = 0;
    while (got < n) {
      const la_ssize_t r = archive_read_data(a, buf.data() + got, n - got);
      if (r <= 0) throw std::runtime_error(path + ": " + archive_error_string(a));
      got += static_cast<size_t>(r);
    }
    const std::string name = archive_entry_pathname(e);
    if (name.ends_with(".cls")) {
      p.sum += std::strtoull(std::string(buf.begin(), buf.end()).c_str(), nullptr, 10);
    } else {
      ++p.members;
      p.bytes += n;
      p.sum += static_cast<uint64_t>(static_cast<unsigned char>(buf[n / 2]));
    }
  }
  archive_read_free(a);
  return p;
}

void write(const std::string& path, const std::vector<char>& data) {
  std::ofstream(path, std::ios::binary)
      .write(data.data(), static_cast<std::streamsize>(data.size()));
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 64;
  int rounds = 5;
  bool keep = false;
  std::string dir = (std::filesystem::temp_directory_path() / "stoker-tar-readers").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--mib") {
      mib = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--rounds") {
      rounds = std::atoi(argv[i + 1]);
    } else if (flag == "--dir") {
      dir = argv[i + 1];
    } else if (flag == "--keep") {
      keep = std::atoi(argv[i + 1]) != 0;
    } else {
      std::fprintf(stderr, "usage: tar_readers [--mib 64] [--rounds 5] [--dir DIR] [--keep 1]\n");
      return 2;
    }
  }
  std::filesystem::create_directories(dir);
  const std::string base = dir + "/shard.tar";
  if (!std::filesystem::exists(base + ".zst")) {
    // Distinct images (no two alike, so zstd finds no repeats across members).
    test::TarWriter tar;
    size_t total = 0;
    for (uint64_t k = 0; total < (mib << 20); ++k) {
      const std::vector<std::byte> jpeg =
          encode_jpeg(synthetic_image(640, 480, k + 1), 640, 480, 95);
      char key[16];
      std::snprintf(key, sizeof key, "%08llu", static_cast<unsigned long long>(k));
      tar.add(std::string(key) + ".jpg", jpeg);
      tar.add(std::string(key) + ".cls", std::to_string(k % 1000));
      total += jpeg.size() + 1536;
    }
    const std::vector<char> plain = tar.finish();
    write(base, plain);
    write(base + ".gz", test::gzip_bytes(plain));
    write(base + ".zst", test::zstd_bytes(plain));
  }
  const double mb = std::filesystem::file_size(base) / 1e6;
  setenv("STOKER_CACHE_DIR", "none", 1);
  std::printf("shard: %.1f MB of tar data; MB/s of tar data per pass (page cache), %d rounds\n", mb,
              rounds);
  for (const char* ext : {"", ".gz", ".zst"}) {
    const std::string path = base + ext;
    const TarShardSource src({path}, {.labels = true, .stream = true});
    const Pass want = read_stoker(src);  // warms the page cache and both code paths
    if (const Pass got = read_libarchive(path);
        got.members != want.members || got.bytes != want.bytes || got.sum != want.sum) {
      std::fprintf(stderr, "%s: the readers disagree (%llu vs %llu members)\n", path.c_str(),
                   static_cast<unsigned long long>(got.members),
                   static_cast<unsigned long long>(want.members));
      return 1;
    }
    std::vector<double> ours, theirs;
    auto time = [](const std::function<void()>& f) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int r = 0; r < rounds; ++r) {  // alternated, the first reader changing each round
      for (int k = 0; k < 2; ++k) {
        if ((r + k) % 2 == 0)
          ours.push_back(mb / time([&] { read_stoker(src); }));
        else
          theirs.push_back(mb / time([&] { read_libarchive(path); }));
      }
    }
    std::printf("%-8s %llu images (%.0f KB file)\n", ext[0] ? ext + 1 : "tar",
                static_cast<unsigned long long>(want.members),
                std::filesystem::file_size(path) / 1e3);
    for (const auto& [name, v] : {std::pair{"stoker", ours}, std::pair{"libarchive", theirs}}) {
      std::printf("  %-11s", name);
      for (double x : v) std::printf(" %7.0f", x);
      std::printf("   MB/s\n");
    }
  }
  if (!keep) {
    for (const char* ext : {"", ".gz", ".zst"}) std::filesystem::remove(base + ext);
  }
  return 0;
}
