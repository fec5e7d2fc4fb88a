#include "stoker/common/strings.hpp"

#include <cctype>
#include <fstream>

namespace stoker {

namespace {
constexpr const char* kBlanks = " \t\r\n";
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    if (end == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::map<std::string, std::string> split_assignments(std::string_view list, char sep) {
  std::map<std::string, std::string> out;
  for (std::string_view item : split(list, sep)) {
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos) out[std::string(item.substr(0, eq))] = item.substr(eq + 1);
  }
  return out;
}

std::string join_numbers(const std::vector<int>& items, std::string_view sep) {
  std::vector<std::string> text;
  for (int i : items) text.push_back(std::to_string(i));
  return join(text, sep);
}

std::string trim(std::string_view s) {
  const size_t a = s.find_first_not_of(kBlanks), b = s.find_last_not_of(kBlanks);
  return a == std::string_view::npos ? "" : std::string(s.substr(a, b - a + 1));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string under_root(const std::string& root, std::string_view path) {
  std::string out = root.empty() ? "/" : root;
  if (out.back() != '/') out += '/';
  const size_t skip = path.find_first_not_of('/');
  return skip == std::string_view::npos ? out : out + std::string(path.substr(skip));
}

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  line.erase(line.find_last_not_of(kBlanks) + 1);
  return line;
}

}  // namespace stoker
