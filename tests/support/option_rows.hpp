// The option tables' tests (loader_fields, image_fields): a value of a row's kind, within its
// bounds and other than the default where the kind allows, to set and read back.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "stoker/common/option_fields.hpp"

namespace stoker::test {

template <class T>
OptionValue another_value(const OptionField<T>& row) {
  switch (row.kind) {
    case OptionKind::Flag:
      return !std::get<bool>(row.get(T{}));
    case OptionKind::Whole:
      return row.max == 0 ? row.min : std::min<uint64_t>(row.max, row.min + 3);
    case OptionKind::Fraction:
      return (row.lo + row.hi) / 2;
    case OptionKind::Choice:
      return std::string(row.choices.back());
    case OptionKind::Range:
      return std::vector<double>{0.25, 0.5};
    case OptionKind::Triple:
      return std::vector<double>{0.25, 0.5, 0.75};
  }
  return std::monostate{};
}

}  // namespace stoker::test
