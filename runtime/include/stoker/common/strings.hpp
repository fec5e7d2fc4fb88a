// The small string helpers every room needs (the plugin, the planner's I/O shell, the
// doctor, the tools): one copy of each, so a list is split and a file's line is read the
// same way everywhere.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stoker {

// Every part between separators, empty ones included: split("a,,b", ',') = {"a", "", "b"},
// split("", ',') = {""}. The views point into `s`.
std::vector<std::string_view> split(std::string_view s, char sep);

// The items with `sep` between them: join({"a", "b"}, ", ") = "a, b".
std::string join(const std::vector<std::string>& items, std::string_view sep = ",");
// Same for numbers: join_numbers({0, 2}) = "0,2".
std::string join_numbers(const std::vector<int>& items, std::string_view sep = ",");

// The NAME=VALUE items of a list ("A=1,B=2" with sep ','): NAME -> VALUE; an item without
// '=' is passed over, and a later NAME replaces an earlier one.
std::map<std::string, std::string> split_assignments(std::string_view list, char sep);

// Without leading and trailing blanks (space, tab, CR, LF).
std::string trim(std::string_view s);

// Lower-case ASCII letters.
std::string lower(std::string s);

// An absolute `path` under another root ("/" = this system): under_root("/tmp/fake",
// "/proc/self/cgroup") = "/tmp/fake/proc/self/cgroup". Lets tests point readers of /proc and
// /sys at a fake tree.
std::string under_root(const std::string& root, std::string_view path);

// The first line of a file without trailing blanks; nullopt when the file cannot be read or
// has no line.
std::optional<std::string> read_first_line(const std::string& path);

}  // namespace stoker
