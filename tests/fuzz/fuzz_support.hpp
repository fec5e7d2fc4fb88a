// What every fuzz target shares: its own temporary folder (no fuzzer writes anywhere else;
// removed at exit), the input as a file in it, and the one rule of what a parser may do
// with bad bytes: return, or throw stoker::Error (or the loader's SampleError) with a
// message. Any other exception, an empty message, a crash, a leak or undefined behaviour
// is a finding (libFuzzer stops and keeps the input).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/sources/source.hpp"

namespace stoker::fuzz {

// This process's temporary folder: mkdtemp under $TMPDIR (else /tmp), made on first use
// and removed with its files when the process exits.
const std::string& temp_dir();

// Writes `bytes` to temp_dir()/name (replacing it) and returns the path.
std::string write_input(const std::string& name, std::span<const uint8_t> bytes);

// The input as text / as bytes.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}
inline std::span<const std::byte> as_bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

// Aborts (a finding) with `why` and the message, so libFuzzer keeps the input.
[[noreturn]] void finding(const char* why, const std::string& message);

// Runs `parse`; stoker::Error and SampleError are the expected answers to bad bytes, and
// must say something. Anything else thrown is a finding.
template <class F>
void expect_clean(F&& parse) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.problem().empty() || e.where().empty())
      finding("stoker::Error without where/what", e.what());
  } catch (const SampleError& e) {  // (a transform leaves the location to the loader)
    if (e.what.empty()) finding("SampleError without a message", e.location);
  } catch (const std::exception& e) {
    finding("an exception other than stoker::Error", e.what());
  }
}

// Splits the input into lines (without the '\n').
std::vector<std::string> lines_of(std::string_view text);

}  // namespace stoker::fuzz
