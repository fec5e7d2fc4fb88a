// The table form of an options struct (LoaderOptions, ImageTransformOptions): one row per
// option a user sets, with its name (the Python keyword, the C interface's key, and with
// dashes `stoker bench`'s flag), what it takes, its bounds, what None means, its help, and
// how it is set and read. Front ends walk the rows instead of naming the fields by hand:
// the C interface sets options by name, the Python layer checks each argument against its
// row before it crosses (so its messages name the argument), `stoker bench` makes its
// flags from them and docs/reference.md its tables.
//
// Header only: plain data and the one conversion from a flag's text (option_from_text).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"

namespace stoker {

enum class OptionKind {
  Flag,      // True or False
  Whole,     // a whole number within [min, max]
  Fraction,  // a number within [lo, hi]
  Choice,    // one of `choices`
  Range,     // (min, max): two numbers above `lo`, min <= max, max <= `hi`
  Triple,    // three numbers, each above `lo`
};

inline const char* to_string(OptionKind k) {
  switch (k) {
    case OptionKind::Flag:
      return "flag";
    case OptionKind::Whole:
      return "whole";
    case OptionKind::Fraction:
      return "fraction";
    case OptionKind::Choice:
      return "choice";
    case OptionKind::Range:
      return "range";
    case OptionKind::Triple:
      return "triple";
  }
  return "?";
}

// A value as a front end gives it: None (monostate, where the row allows it), a flag, a
// whole number, a number, a choice's name, or a sequence of numbers.
using OptionValue =
    std::variant<std::monostate, bool, uint64_t, double, std::string, std::vector<double>>;

template <class T>
struct OptionField {
  const char* name;
  OptionKind kind;
  const char* help;
  uint64_t min = 0, max = 0;  // Whole
  double lo = 0, hi = 0;      // Fraction: [lo, hi]; Range and Triple: each > lo (Range <= hi)
  std::vector<const char*> choices = {};
  const char* none = nullptr;  // what None means when a front end may give it; nullptr: never
  bool bench = false;          // `stoker bench` offers it as --NAME (dashes for underscores)
  // Sets the option from a value of its kind (None only where `none` is set); the front end
  // checked it against the row.
  std::function<void(T&, const OptionValue&)> set;
  std::function<OptionValue(const T&)> get;  // for the docs' defaults
};

// The row named `name`, or nullptr.
template <class T>
const OptionField<T>* find_option(const std::vector<OptionField<T>>& rows, std::string_view name) {
  for (const OptionField<T>& r : rows) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

// A flag's text as the row's value (`stoker bench --workers=4`): Error naming `flag` when the
// text is not of the row's kind or outside its bounds. Flags, ranges and triples are not
// given as text.
template <class T>
OptionValue option_from_text(const OptionField<T>& row, const std::string& flag,
                             const std::string& text) {
  switch (row.kind) {
    case OptionKind::Whole:
      if (auto v = values::parse_whole(text, row.min, row.max)) return *v;
      throw Error(flag + "=" + text, "expected a whole number, " + std::to_string(row.min) +
                                         (row.max == std::numeric_limits<uint64_t>::max()
                                              ? std::string(" or more")
                                              : " to " + std::to_string(row.max)));
    case OptionKind::Fraction:
      if (auto v = values::parse_decimal(text); v && *v >= row.lo && *v <= row.hi) return *v;
      throw Error(flag + "=" + text, "expected a number from " + values::format_fraction(row.lo) +
                                         " to " + values::format_fraction(row.hi));
    case OptionKind::Choice:
      for (const char* c : row.choices) {
        if (text == c) return text;
      }
      {
        std::string listed;
        for (const char* c : row.choices) listed += (listed.empty() ? "" : ", ") + std::string(c);
        throw Error(flag + "=" + text, "expected one of " + listed);
      }
    default:
      throw Error(flag, "is not given as text");
  }
}

}  // namespace stoker
