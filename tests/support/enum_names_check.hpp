// Checks one enum's name table (stoker/common/enum_names.hpp) both ways: every value has one
// name, no two share it, the printer and the parser agree, and nothing else parses.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "stoker/common/enum_names.hpp"

template <typename E, size_t N, typename Print, typename Parse>
void expect_names_round_trip(const stoker::EnumName<E> (&table)[N], Print print, Parse parse) {
  std::set<std::string> names;
  std::set<E> values;
  for (const auto& e : table) {
    EXPECT_TRUE(names.insert(e.name).second) << "name twice: " << e.name;
    EXPECT_TRUE(values.insert(e.value).second) << "value twice: " << e.name;
    EXPECT_STREQ(print(e.value), e.name);
    const std::optional<E> back = parse(e.name);
    ASSERT_TRUE(back.has_value()) << e.name;
    EXPECT_EQ(*back, e.value) << e.name;
    EXPECT_FALSE(parse(std::string(e.name) + " ").has_value()) << e.name;
  }
  EXPECT_FALSE(parse("").has_value());
  EXPECT_FALSE(parse("?").has_value());
}
