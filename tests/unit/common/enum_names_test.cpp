#include "stoker/common/enum_names.hpp"

#include <gtest/gtest.h>

#include "enum_names_check.hpp"

namespace {

enum class Colour { Red, Green, Blue };
constexpr stoker::EnumName<Colour> kColours[] = {
    {Colour::Red, "red"}, {Colour::Green, "green"}, {Colour::Blue, "blue"}};

const char* colour_name(Colour c) {
  return stoker::name_of(kColours, c);
}
std::optional<Colour> colour_named(std::string_view s) {
  return stoker::value_named(kColours, s);
}

TEST(EnumNames, OneTableReadBothWays) {
  expect_names_round_trip(kColours, colour_name, colour_named);
  EXPECT_STREQ(colour_name(static_cast<Colour>(7)), "?");
  EXPECT_FALSE(colour_named("Red").has_value());  // exact names only
  static_assert(stoker::name_of(kColours, Colour::Green)[0] == 'g');
  static_assert(stoker::value_named(kColours, "blue") == Colour::Blue);
}

TEST(EnumNames, NamesForMessages) {
  EXPECT_EQ(stoker::names_of(kColours), "red, green or blue");
  EXPECT_EQ(stoker::names_of(kColours, ", "), "red, green, blue");
  constexpr stoker::EnumName<Colour> two[] = {{Colour::Red, "red"}, {Colour::Blue, "blue"}};
  EXPECT_EQ(stoker::names_of(two), "red or blue");
  constexpr stoker::EnumName<Colour> one[] = {{Colour::Red, "red"}};
  EXPECT_EQ(stoker::names_of(one), "red");
}

}  // namespace
