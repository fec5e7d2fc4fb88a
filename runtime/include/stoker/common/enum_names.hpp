// One table of names per enum, read both ways: the printer (to_string) and the parser of an
// enum walk the same table, so what stoker prints is what it reads back. Each table lives
// beside its enum:
//
//   enum class BindMode { GpuNuma, Even, None };
//   inline constexpr EnumName<BindMode> kBindModeNames[] = {
//       {BindMode::GpuNuma, "gpu-numa"}, {BindMode::Even, "even"}, {BindMode::None, "none"}};
//
// A table names every value of its enum once (the unit tests round-trip each table).
//
// Header only: templates over each enum's table.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace stoker {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`; "?" when the table lacks it.
template <typename E, size_t N>
constexpr const char* name_of(const EnumName<E> (&table)[N], E value) {
  for (const EnumName<E>& e : table)
    if (e.value == value) return e.name;
  return "?";
}

// The value named exactly `name`; nullopt for any other text.
template <typename E, size_t N>
constexpr std::optional<E> value_named(const EnumName<E> (&table)[N], std::string_view name) {
  for (const EnumName<E>& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

// The names in table order for a message: "gpu-numa, even or none" (`last` joins the last
// two; ", " gives "always, opt-in, never").
template <typename E, size_t N>
std::string names_of(const EnumName<E> (&table)[N], std::string_view last = " or ") {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? last : std::string_view(", ");
    out += table[i].name;
  }
  return out;
}

}  // namespace stoker
