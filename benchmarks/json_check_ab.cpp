// How fast a job-log line is checked, stoker's scanner against simdjson (issue 37 part 4), on
// one thread, over the lines of a job log (tests/support/make_job_log.py):
//   scanner    scan_json_into, as `stoker report` runs it (checks, lists tokens)
//   dom        simdjson's DOM parser (checks fully, builds its tape; run-time dispatch picks
//              the CPU's kernel): the least any simdjson design that checks every line pays
//   ondemand   simdjson's On-Demand walk of every value (as the STOKER_JSON_SIMDJSON build
//              does), with the kernel this file was compiled for
// Rounds alternate the three. Build (from the build dir of a configured checkout):
//   g++ -O2 -std=c++20 [-march=x86-64-v3] -I../runtime/include ../benchmarks/json_check_ab.cpp \
//     runtime/libstoker_core.a -lsimdjson -o json_check_ab
//   ./json_check_ab LOG [ROUNDS]
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "stoker/common/json_scan.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

size_t walk(simdjson::ondemand::value v) {  // every value asked for: each is checked
  using simdjson::ondemand::json_type;
  size_t n = 1;
  switch (v.type().value_unsafe()) {
    case json_type::object:
      for (auto field : v.get_object()) n += walk(field.value());
      return n;
    case json_type::array:
      for (auto item : v.get_array()) n += walk(item.value());
      return n;
    case json_type::string: return n + (v.get_string().error() ? 1000000 : 0);
    case json_type::number: return n + (v.get_double().error() ? 1000000 : 0);
    case json_type::boolean: return n + (v.get_bool().error() ? 1000000 : 0);
    default: return n + (v.is_null().error() ? 1000000 : 0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: json_check_ab LOG [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::stoi(argv[2]) : 3;
  std::ifstream in(argv[1]);
  std::vector<std::string> lines;
  size_t bytes = 0;
  for (std::string line; std::getline(in, line);) {
    bytes += line.size();
    lines.push_back(std::move(line));
  }
  std::vector<simdjson::padded_string> padded(lines.begin(), lines.end());
  std::printf("%zu lines, %.1f MB; simdjson kernel (DOM): %s\n", lines.size(), bytes / 1e6,
              simdjson::get_active_implementation()->name().c_str());
  std::vector<stoker::JsonToken> tokens;
  simdjson::dom::parser dom;
  simdjson::ondemand::parser ondemand;
  for (int r = 0; r < rounds; ++r) {
    auto t = std::chrono::steady_clock::now();
    size_t ok = 0;
    for (const std::string& l : lines) ok += stoker::scan_json_into(l, 64, tokens, nullptr);
    const double scanner = seconds_since(t);
    t = std::chrono::steady_clock::now();
    size_t ok_dom = 0;
    for (const auto& p : padded) ok_dom += dom.parse(p).error() == simdjson::SUCCESS;
    const double dom_s = seconds_since(t);
    t = std::chrono::steady_clock::now();
    size_t values = 0;
    for (const auto& p : padded) {
      auto doc = ondemand.iterate(p);
      values += walk(doc.get_value().value_unsafe());
    }
    const double od = seconds_since(t);
    std::printf("round %d: scanner %.3f s (%zu ok), dom %.3f s (%zu ok), ondemand %.3f s "
                "(%zu values); per line: %.2f / %.2f / %.2f us\n",
                r, scanner, ok, dom_s, ok_dom, od, values, 1e6 * scanner / lines.size(),
                1e6 * dom_s / lines.size(), 1e6 * od / lines.size());
  }
}
