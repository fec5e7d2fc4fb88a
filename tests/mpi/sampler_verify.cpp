// Checks what mpi_sampler_ranks wrote: for each phase folder (in resume order), every
// rank took the same number of indices and wrote the same resume state; over all phases,
// every sample of the epoch was read exactly once, apart from the padding the pad rule
// adds (drop_last off) or the tail it drops (drop_last on).
//   mpi_sampler_verify SIZE PHASE_DIR...
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "coverage.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: mpi_sampler_verify SIZE PHASE_DIR...\n");
    return 2;
  }
  const uint64_t n = std::stoull(argv[1]);
  std::vector<std::vector<uint64_t>> lists;
  uint64_t padding = 0, end = 0;
  int failures = 0;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "FAIL: %s\n", why.c_str());
    ++failures;
  };
  for (int p = 2; p < argc; ++p) {
    const fs::path dir = argv[p];
    uint64_t world = 0, start = 0, taken = 0;
    std::string state0;
    for (uint64_t r = 0; world == 0 || r < world; ++r) {
      std::ifstream in(dir / ("rank-" + std::to_string(r) + ".txt"));
      if (!in) {
        fail(dir.string() + ": no output from rank " + std::to_string(r));
        break;
      }
      uint64_t s = 0, len = 0, w = 0, t = 0;
      std::string header;
      std::getline(in, header);
      if (std::sscanf(header.c_str(), "start=%lu length=%lu world=%lu taken=%lu", &s, &len, &w,
                      &t) != 4) {
        fail(dir.string() + ": rank " + std::to_string(r) + " header '" + header + "'");
        break;
      }
      if (r == 0) {
        world = w;
        start = s;
        taken = t;
      } else if (s != start || t != taken || w != world) {
        fail(dir.string() + ": rank " + std::to_string(r) + " took " + std::to_string(t) +
             " from " + std::to_string(s) + ", rank 0 took " + std::to_string(taken) + " from " +
             std::to_string(start));
      }
      std::vector<uint64_t> v;
      for (uint64_t x; in >> x;) v.push_back(x);
      if (v.size() != t) fail(dir.string() + ": rank " + std::to_string(r) + " wrote too few");
      lists.push_back(v);
      std::ifstream st(dir / ("state-" + std::to_string(r) + ".txt"));
      std::string state;
      std::getline(st, state);
      if (r == 0) state0 = state;
      if (state != state0) fail(dir.string() + ": rank " + std::to_string(r) + " state differs");
    }
    const uint64_t dealt = taken * world, remaining = n - start;
    padding += dealt > remaining ? dealt - remaining : 0;
    end = start + (dealt < remaining ? dealt : remaining);
    std::printf("%s: %lu ranks took %lu indices each from global position %lu\n",
                dir.string().c_str(), world, taken, start);
  }
  const auto c = stoker::testing::coverage(lists, n);
  std::printf("coverage of %lu samples: %lu read, %lu missing, %lu repeated (padding %lu)\n", n,
              c.total, c.missing, c.repeated, padding);
  if (c.outside) fail("indices outside the dataset");
  if (c.repeated != padding) fail("repeats beyond the padding");
  if (c.missing != n - end) fail("missing samples: expected " + std::to_string(n - end));
  if (failures == 0) std::printf("OK\n");
  return failures ? 1 : 0;
}
