// A small strict parser of the Prometheus text exposition format (0.0.4), enough to hold
// stoker's metrics file to the rules the textfile collector enforces: every sample line is
// `name{label="value",...} value`, a family's HELP and TYPE come before its samples, its
// samples are contiguous, names are valid, no series appears twice, the file ends with \n.
#pragma once

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace stoker::test {

// A whole file as text ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct PromSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct PromFile {
  std::map<std::string, std::string> type, help;  // by family name
  std::vector<PromSample> samples;

  // The value of the one sample of `name` whose labels include `match`; throws if none.
  double value(const std::string& name,
               const std::map<std::string, std::string>& match = {}) const {
    for (const PromSample& s : samples) {
      if (s.name != name) continue;
      bool ok = true;
      for (const auto& [k, v] : match) ok = ok && s.labels.count(k) && s.labels.at(k) == v;
      if (ok) return s.value;
    }
    throw std::runtime_error("no sample " + name);
  }
};

inline bool prom_name_ok(const std::string& n, bool metric) {
  if (n.empty()) return false;
  auto first = [&](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (metric && c == ':');
  };
  auto rest = [&](char c) { return first(c) || std::isdigit(static_cast<unsigned char>(c)); };
  if (!first(n[0])) return false;
  for (char c : n)
    if (!rest(c)) return false;
  return true;
}

inline PromFile parse_prometheus(const std::string& text) {
  PromFile f;
  if (text.empty() || text.back() != '\n') throw std::runtime_error("does not end with a newline");
  std::istringstream in(text);
  std::string line, current;  // the family whose samples are being read
  std::set<std::string> finished, series;
  int no = 0;
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("line " + std::to_string(no) + ": " + why + ": " + line);
  };
  auto enter = [&](const std::string& family) {
    if (family == current) return;
    if (!current.empty()) finished.insert(current);
    if (finished.count(family)) fail("family " + family + " is not contiguous");
    current = family;
  };
  while (std::getline(in, line)) {
    ++no;
    if (line.empty()) fail("empty line");
    if (line[0] == '#') {
      std::istringstream w(line);
      std::string hash, kind, name, rest;
      w >> hash >> kind >> name;
      std::getline(w, rest);
      if (hash != "#" || (kind != "HELP" && kind != "TYPE")) fail("comment other than HELP/TYPE");
      if (!prom_name_ok(name, true)) fail("bad metric name");
      enter(name);
      auto& seen = kind == "HELP" ? f.help : f.type;
      if (seen.count(name)) fail("second " + kind);
      if (kind == "TYPE") {
        size_t at = rest.find_first_not_of(' ');
        std::string t = at == std::string::npos ? "" : rest.substr(at);
        if (t != "counter" && t != "gauge" && t != "untyped" && t != "histogram" && t != "summary")
          fail("bad type");
        if (f.samples.size() && f.samples.back().name == name) fail("TYPE after samples");
        seen[name] = t;
      } else {
        if (rest.size() < 2) fail("empty HELP");
        seen[name] = rest.substr(1);
      }
      continue;
    }
    PromSample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!prom_name_ok(s.name, true)) fail("bad metric name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos) fail("label without =");
        std::string key = line.substr(i, eq - i);
        if (!prom_name_ok(key, false) || key.rfind("__", 0) == 0) fail("bad label name");
        if (eq + 1 >= line.size() || line[eq + 1] != '"') fail("label value not quoted");
        std::string value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            if (++j >= line.size()) fail("dangling escape");
            char c = line[j];
            if (c == 'n')
              value += '\n';
            else if (c == '\\' || c == '"')
              value += c;
            else
              fail("bad escape");
          } else {
            value += line[j];
          }
        }
        if (j >= line.size()) fail("unterminated label value");
        if (s.labels.count(key)) fail("label twice");
        s.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) fail("unterminated labels");
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') fail("no space before the value");
    std::string num = line.substr(i + 1);
    char* end = nullptr;
    s.value = std::strtod(num.c_str(), &end);
    if (num.empty() || *end != '\0') fail("bad value");
    // Counter samples carry the family name; others too for stoker (no histograms).
    if (!f.type.count(s.name) || !f.help.count(s.name)) fail("sample before its HELP and TYPE");
    enter(s.name);
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) fail("series twice");
    f.samples.push_back(std::move(s));
  }
  return f;
}

}  // namespace stoker::test
