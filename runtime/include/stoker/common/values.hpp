// Strict parsers and printers for the small values shared by the profiles file, the
// user flags, the STOKER_* environment and `stoker plan`: one definition of what a
// "whole number", a "fraction" or a "size" is, so every input accepts the same text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stoker::values {

// The one parser of whole numbers: decimal digits only (no sign, no spaces, no "0x"),
// within [lo, hi]. Every decimal whole number stoker reads (flags, profiles, STOKER_* and
// launcher variables, CPU lists, cgroup and /sys files, GPU ids, Slurm task lists and
// releases, sampler states, file headers) goes through it; only the fields of binary formats
// (tar's octal and base-256 sizes) and signed label text have parsers of their own.
std::optional<uint64_t> parse_whole(std::string_view s, uint64_t lo = 0, uint64_t hi = UINT64_MAX);
// The same for hexadecimal: 1 to 16 digits [0-9a-fA-F], no "0x" (the caller strips the
// prefix its format has). Cache files, capability masks, fingerprints.
std::optional<uint64_t> parse_hex(std::string_view s);
// A plain non-negative decimal: "1", "0.5", ".5", "2."; no sign, exponent, inf or nan.
std::optional<double> parse_decimal(std::string_view s);
// A decimal number in (0, 1]: "0.75", "1", ".5".
std::optional<double> parse_fraction(std::string_view s);
// Bytes with an optional binary suffix: K, M, G, T or KiB, MiB, GiB, TiB (all x1024,
// Slurm's convention), or B. "64M", "1.5GiB", "4096". At least 1 byte.
std::optional<uint64_t> parse_size(std::string_view s);
// "yes" / "no".
std::optional<bool> parse_yes_no(std::string_view s);
// A profile name: 1..64 of [A-Za-z0-9_-].
bool valid_name(std::string_view s);

// "64 MiB", "1.5 GiB", "512 B": for people, not for parsing back.
std::string format_bytes(uint64_t bytes);
// The shortest text that parses back to the same double ("0.75").
std::string format_fraction(double v);

}  // namespace stoker::values
