// SamplerState's text form: one stable line, every key required once, nothing else.
//   stoker-sampler v2 seed=S epoch=E consumed=C size=N fingerprint=0xF shuffle=1 block=B group=G
// and, for a streaming loader only, both of " buffer=S phases=W:C,W:C" ("phases=-": none),
// and " ra_reps=N" with repeated augmentation only (absent: 1, as every state before it).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sampler_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/distributed/sampler.hpp"

namespace stoker {

namespace {
constexpr std::string_view kMagic = "stoker-sampler";
const char* const kKeys[] = {"seed",        "epoch",   "consumed", "size",
                             "fingerprint", "shuffle", "block",    "group"};
constexpr size_t kKeyCount = sizeof kKeys / sizeof kKeys[0];

[[noreturn]] void malformed(std::string_view text, const std::string& what) {
  throw Error("sampler state '" + std::string(text) + "'", what,
              "expected: stoker-sampler v2 seed=S epoch=E consumed=C size=N fingerprint=0xF "
              "shuffle=0|1 block=B group=G [buffer=S phases=W:C,...] [ra_reps=N]");
}

uint64_t parse_number(std::string_view text, std::string_view key, std::string_view value) {
  const bool hex = value.starts_with("0x") || value.starts_with("0X");
  const auto out = hex ? values::parse_hex(value.substr(2)) : values::parse_whole(value);
  if (!out) malformed(text, std::string(key) + "=" + std::string(value) + " is not a whole number");
  return *out;
}

// "-" or "W:C,W:C,...": the phases of a streamed epoch.
std::vector<StreamPhase> parse_phases(std::string_view text, std::string_view value) {
  std::vector<StreamPhase> phases;
  if (value == "-") return phases;
  while (!value.empty()) {
    const size_t comma = std::min(value.find(','), value.size());
    const std::string_view item = value.substr(0, comma);
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      malformed(text, "phases item '" + std::string(item) + "' is not WORLD:CONSUMED");
    }
    phases.push_back({parse_number(text, "phases", item.substr(0, colon)),
                      parse_number(text, "phases", item.substr(colon + 1))});
    value.remove_prefix(std::min(comma + 1, value.size()));
  }
  return phases;
}

std::vector<std::string_view> split_words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\n') ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}
}  // namespace

std::string distributed::hex64(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void distributed::unreadable_version(uint64_t version) {
  throw Error("sampler state",
              "format version " + std::to_string(version) +
                  " is not readable; this build reads versions " +
                  std::to_string(SamplerState::kOldestReadableVersion) + " to " +
                  std::to_string(SamplerState::kFormatVersion),
              "resume with the stoker version that wrote the state, or restart the epoch");
}

std::string SamplerState::to_string() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "stoker-sampler v%u seed=%llu epoch=%llu consumed=%llu size=%llu "
                "fingerprint=0x%016llx shuffle=%d block=%llu group=%llu",
                version, static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(epoch), static_cast<unsigned long long>(consumed),
                static_cast<unsigned long long>(size), static_cast<unsigned long long>(fingerprint),
                shuffle ? 1 : 0, static_cast<unsigned long long>(block),
                static_cast<unsigned long long>(group));
  std::string out = buf;
  if (stream) {
    out += " buffer=" + std::to_string(buffer) + " phases=";
    for (size_t i = 0; i < phases.size(); ++i) {
      out += (i ? "," : "") + std::to_string(phases[i].world) + ":" +
             std::to_string(phases[i].consumed);
    }
    if (phases.empty()) out += "-";
  }
  if (ra_reps != 1) out += " ra_reps=" + std::to_string(ra_reps);
  return out;
}

SamplerState SamplerState::parse(std::string_view text) {
  const auto words = split_words(text);
  if (words.empty() || words[0] != kMagic) malformed(text, "does not start with 'stoker-sampler'");
  if (words.size() < 2 || words[1].size() < 2 || words[1][0] != 'v') {
    malformed(text, "has no format version (v2) after 'stoker-sampler'");
  }
  SamplerState s;
  const uint64_t version = parse_number(text, "version", words[1].substr(1));
  if (version < kOldestReadableVersion || version > kFormatVersion) {
    distributed::unreadable_version(version);
  }
  uint64_t values[kKeyCount] = {};
  bool seen[kKeyCount] = {};
  int seen_buffer = 0, seen_phases = 0, seen_reps = 0;
  for (size_t w = 2; w < words.size(); ++w) {
    const auto eq = words[w].find('=');
    if (eq == std::string_view::npos)
      malformed(text, "'" + std::string(words[w]) + "' is not key=value");
    const auto key = words[w].substr(0, eq);
    if (key == "buffer" || key == "phases") {
      if ((key == "buffer" ? seen_buffer : seen_phases)++) {
        malformed(text, "key '" + std::string(key) + "' appears twice");
      }
      if (key == "buffer") s.buffer = parse_number(text, key, words[w].substr(eq + 1));
      if (key == "phases") s.phases = parse_phases(text, words[w].substr(eq + 1));
      continue;
    }
    if (key == "ra_reps") {
      if (seen_reps++) malformed(text, "key 'ra_reps' appears twice");
      s.ra_reps = parse_number(text, key, words[w].substr(eq + 1));
      if (s.ra_reps == 0) malformed(text, "ra_reps must be 1 or more");
      continue;
    }
    size_t k = 0;
    while (k < kKeyCount && key != kKeys[k]) ++k;
    if (k == kKeyCount) malformed(text, "unknown key '" + std::string(key) + "'");
    if (seen[k]) malformed(text, "key '" + std::string(key) + "' appears twice");
    seen[k] = true;
    values[k] = parse_number(text, key, words[w].substr(eq + 1));
  }
  for (size_t k = 0; k < kKeyCount; ++k) {
    if (!seen[k]) malformed(text, "key '" + std::string(kKeys[k]) + "' is missing");
  }
  if (values[5] > 1) malformed(text, "shuffle must be 0 or 1");
  if (seen_buffer != seen_phases) malformed(text, "a streamed state has both buffer= and phases=");
  s.stream = seen_buffer == 1;
  s.version = static_cast<uint32_t>(version);
  s.seed = values[0];
  s.epoch = values[1];
  s.consumed = values[2];
  s.size = values[3];
  s.fingerprint = values[4];
  s.shuffle = values[5] == 1;
  s.block = values[6];
  s.group = values[7];
  return s;
}

}  // namespace stoker
