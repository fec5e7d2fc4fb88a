#include "stoker/common/cpuset.hpp"

#include <algorithm>
#include <bit>

#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

namespace {
bool parse_int(std::string_view s, int& out) {
  const auto v = values::parse_whole(s, 0, CpuSet::kMaxCpu - 1);
  if (v) out = static_cast<int>(*v);
  return v.has_value();
}
}  // namespace

CpuSet CpuSet::from_list(const std::vector<int>& cpus) {
  CpuSet s;
  for (int c : cpus) s.set(c);
  return s;
}

CpuSet CpuSet::range(int first, int last) {
  CpuSet s;
  for (int c = first; c <= last; ++c) s.set(c);
  return s;
}

CpuSet CpuSet::parse(std::string_view text, std::string_view where) {
  CpuSet s;
  auto bad = [&](std::string_view part) {
    return Error(std::string(where),
                 "malformed CPU list '" + std::string(text) + "' at '" + std::string(part) + "'",
                 "use OS CPU numbers and ranges such as 0-5,12");
  };
  if (text.empty()) return s;
  for (std::string_view part : split(text, ',')) {
    const size_t dash = part.find('-');
    int a = 0, b = 0;
    const bool ok =
        dash == std::string_view::npos
            ? parse_int(part, a) && parse_int(part, b)
            : parse_int(part.substr(0, dash), a) && parse_int(part.substr(dash + 1), b) && a <= b;
    if (!ok) throw bad(part);
    for (int c = a; c <= b; ++c) s.set(c);
  }
  return s;
}

void CpuSet::set(int cpu) {
  if (cpu < 0) return;
  size_t w = static_cast<size_t>(cpu) / 64;
  if (words_.size() <= w) words_.resize(w + 1, 0);
  words_[w] |= uint64_t{1} << (cpu % 64);
}

void CpuSet::clear(int cpu) {
  if (cpu < 0) return;
  size_t w = static_cast<size_t>(cpu) / 64;
  if (w < words_.size()) words_[w] &= ~(uint64_t{1} << (cpu % 64));
  trim();
}

bool CpuSet::test(int cpu) const {
  if (cpu < 0) return false;
  size_t w = static_cast<size_t>(cpu) / 64;
  return w < words_.size() && (words_[w] >> (cpu % 64) & 1);
}

int CpuSet::count() const {
  int n = 0;
  for (uint64_t w : words_) n += std::popcount(w);
  return n;
}

int CpuSet::first() const {
  for (size_t w = 0; w < words_.size(); ++w)
    if (words_[w]) return static_cast<int>(w * 64) + std::countr_zero(words_[w]);
  return -1;
}

std::vector<int> CpuSet::list() const {
  std::vector<int> out;
  for (size_t w = 0; w < words_.size(); ++w)
    for (uint64_t bits = words_[w]; bits; bits &= bits - 1)
      out.push_back(static_cast<int>(w * 64) + std::countr_zero(bits));
  return out;
}

std::string CpuSet::to_string() const {
  std::string out;
  std::vector<int> cpus = list();
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

CpuSet CpuSet::operator&(const CpuSet& o) const {
  CpuSet r;
  r.words_.resize(std::min(words_.size(), o.words_.size()));
  for (size_t i = 0; i < r.words_.size(); ++i) r.words_[i] = words_[i] & o.words_[i];
  r.trim();
  return r;
}

CpuSet CpuSet::operator|(const CpuSet& o) const {
  CpuSet r;
  r.words_.resize(std::max(words_.size(), o.words_.size()), 0);
  for (size_t i = 0; i < r.words_.size(); ++i)
    r.words_[i] = (i < words_.size() ? words_[i] : 0) | (i < o.words_.size() ? o.words_[i] : 0);
  return r;
}

CpuSet CpuSet::operator-(const CpuSet& o) const {
  CpuSet r = *this;
  for (size_t i = 0; i < r.words_.size() && i < o.words_.size(); ++i) r.words_[i] &= ~o.words_[i];
  r.trim();
  return r;
}

bool CpuSet::is_subset_of(const CpuSet& o) const {
  return (*this - o).empty();
}

bool CpuSet::operator==(const CpuSet& o) const {
  return words_ == o.words_;
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace stoker
