// CpuSet: a set of OS CPU (PU) numbers, printed and parsed as Linux CPU lists ("0-5,12").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

class CpuSet {
 public:
  // CPU numbers are below this: far above any real machine; bounds parsing of garbage.
  static constexpr int kMaxCpu = 1 << 16;

  CpuSet() = default;
  static CpuSet from_list(const std::vector<int>& cpus);
  static CpuSet range(int first, int last);  // inclusive
  // Parses "0-3,8,10-11". Throws stoker::Error naming `where` on malformed text.
  static CpuSet parse(std::string_view text, std::string_view where = "cpu list");

  void set(int cpu);
  void clear(int cpu);
  bool test(int cpu) const;
  int count() const;
  bool empty() const { return count() == 0; }
  int first() const;              // -1 when empty
  std::vector<int> list() const;  // ascending
  std::string to_string() const;  // "0-3,8"; "" when empty

  CpuSet operator&(const CpuSet& o) const;
  CpuSet operator|(const CpuSet& o) const;
  CpuSet operator-(const CpuSet& o) const;  // set difference
  bool is_subset_of(const CpuSet& o) const;
  bool intersects(const CpuSet& o) const { return !(*this & o).empty(); }
  bool operator==(const CpuSet& o) const;

 private:
  void trim();
  std::vector<uint64_t> words_;  // bit i of word w is CPU 64*w+i; no trailing zero words
};

}  // namespace stoker
