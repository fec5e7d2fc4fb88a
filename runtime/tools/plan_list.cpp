#include "plan_list.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "stoker/common/values.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker::cli {

namespace {

using nlohmann::json;

// One setting as a profiles file writes it, and as --json gives it.
struct Knob {
  const char* key;
  std::string text;
  json value;
};

// Bytes in the profiles file's own syntax: the largest binary suffix that divides exactly.
std::string size_text(uint64_t bytes) {
  static const char units[] = {'T', 'G', 'M', 'K'};
  for (int i = 0; i < 4; ++i) {
    const uint64_t unit = uint64_t{1} << (10 * (4 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + units[i];
  }
  return std::to_string(bytes);
}

std::string yes_no(bool b) {
  return b ? "yes" : "no";
}

std::vector<Knob> profile_knobs(const Profile& p) {
  using values::format_fraction;
  const uint64_t batch = p.batch_bytes ? p.batch_bytes : kDefaultBatchBytes;
  return {
      {"WorkerFraction", format_fraction(p.worker_fraction), p.worker_fraction},
      {"MainCores", std::to_string(p.main_cores), p.main_cores},
      {"PrefetchPerWorker", std::to_string(p.prefetch_per_worker), p.prefetch_per_worker},
      {"MinPrefetch", std::to_string(p.min_prefetch), p.min_prefetch},
      {"MaxPrefetch", std::to_string(p.max_prefetch), p.max_prefetch},
      {"MemShare", format_fraction(p.mem_share), p.mem_share},
      {"PinMemory", to_string(p.pin_memory), to_string(p.pin_memory)},
      {"MaxReaders", p.max_readers ? std::to_string(p.max_readers) : "none",
       p.max_readers ? json(p.max_readers) : json("none")},
      {"SmtAsCores", yes_no(p.smt_as_cores), p.smt_as_cores},
      {"SpillCores", yes_no(p.spill_cores), p.spill_cores},
      {"BatchBytes", size_text(batch), batch},
  };
}

std::vector<Knob> caps_knobs(const Caps& c) {
  using values::format_fraction;
  return {
      {"DefaultProfile", c.default_profile, c.default_profile},
      {"MaxWorkerFraction", format_fraction(c.max_worker_fraction), c.max_worker_fraction},
      {"MaxPrefetch", std::to_string(c.max_prefetch), c.max_prefetch},
      {"MaxMemShare", format_fraction(c.max_mem_share), c.max_mem_share},
      {"AllowOverride", yes_no(c.allow_override), c.allow_override},
  };
}

std::string words_of(const std::vector<Knob>& knobs) {
  std::string s;
  for (const Knob& k : knobs) s += std::string(" ") + k.key + "=" + k.text;
  return s;
}

json values_of(const std::vector<Knob>& knobs) {
  json j = json::object();
  for (const Knob& k : knobs) j[k.key] = k.value;
  return j;
}

// What one profile is, beside the built-ins: its origin and what the file changed.
struct Origin {
  int line = 0;            // its line in the file, 0 for a built-in left as it is
  std::string base;        // the built-in it starts from
  bool overrides = false;  // the file redefines a built-in of the same name
  std::vector<std::pair<std::string, std::string>> changed;  // key -> "old -> new"
};

Origin origin_of(const ProfileSet& set, const Profile& p) {
  static const ProfileSet builtins = builtin_profiles();
  Origin o;
  auto at = set.file_lines.find(p.name);
  if (at == set.file_lines.end()) return o;
  o.line = at->second;
  o.overrides = builtins.has(p.name);
  o.base = o.overrides ? p.name : "balanced";
  const Profile& base = builtins.get(o.base);
  if (!o.overrides) return o;
  if (base.description != p.description) o.changed.push_back({"Description", "changed"});
  const auto before = profile_knobs(base), after = profile_knobs(p);
  for (size_t i = 0; i < after.size(); ++i)
    if (before[i].text != after[i].text)
      o.changed.push_back({after[i].key, before[i].text + " -> " + after[i].text});
  return o;
}

std::string origin_text(const ProfileSet& set, const Profile& p, const Origin& o) {
  std::string s = p.name + ": ";
  if (o.line == 0) {
    s += "built-in";
  } else {
    s += "line " + std::to_string(o.line) + " of the file, ";
    if (!o.overrides) {
      s += "new (keys not given come from the built-in " + o.base + ")";
    } else {
      s += "overrides the built-in";
      std::string changes;
      for (const auto& [key, what] : o.changed)
        changes += (changes.empty() ? "" : ", ") + key + " " + what;
      s += changes.empty() ? " (no value changed)" : " (" + changes + ")";
    }
  }
  if (p.name == set.caps.default_profile) s += "; the default profile";
  return s;
}

json profile_json(const ProfileSet& set, const Profile& p, const Origin& o) {
  json changed = json::object();
  for (const auto& [key, what] : o.changed) changed[key] = what;
  return {{"name", p.name},
          {"description", p.description},
          {"default", p.name == set.caps.default_profile},
          {"origin", o.line ? "file" : "built-in"},
          {"line", o.line ? json(o.line) : json(nullptr)},
          {"overrides_builtin", o.overrides},
          {"base", o.line ? json(o.base) : json(nullptr)},
          {"changed", changed},
          {"knobs", values_of(profile_knobs(p))}};
}

std::vector<std::string> overridden_builtins(const ProfileSet& set) {
  const ProfileSet builtins = builtin_profiles();
  std::vector<std::string> names;
  for (const auto& [name, line] : set.file_lines)
    if (builtins.has(name)) names.push_back(name);
  return names;
}

void print_listing(const ProfileSet& set, const ProfilesSource& source) {
  std::printf(
      "# stoker plan --list: %s (%s)\n",
      source.file.empty() ? "the built-in profiles" : ("the profiles file " + source.file).c_str(),
      source.why.c_str());
  std::string overridden;
  for (const std::string& name : overridden_builtins(set))
    overridden += (overridden.empty() ? "" : ", ") + name + " (line " +
                  std::to_string(set.file_lines.at(name)) + ")";
  if (!source.file.empty())
    std::printf("# built-ins overridden by the file: %s\n",
                overridden.empty() ? "none" : overridden.c_str());
  std::printf("\n# caps: %s\nDefaults%s\n",
              set.caps_line ? ("line " + std::to_string(set.caps_line) + " of the file").c_str()
                            : "the built-in caps (no Defaults line)",
              words_of(caps_knobs(set.caps)).c_str());
  for (const auto& [name, p] : set.profiles) {
    std::printf("\n# %s\nProfile=%s", origin_text(set, p, origin_of(set, p)).c_str(), name.c_str());
    if (!p.description.empty()) std::printf(" Description=\"%s\"", p.description.c_str());
    std::printf("%s\n", words_of(profile_knobs(p)).c_str());
  }
}

json listing_json(const ProfileSet& set, const ProfilesSource& source) {
  json profiles = json::array();
  for (const auto& [name, p] : set.profiles)
    profiles.push_back(profile_json(set, p, origin_of(set, p)));
  return {{"file", source.file.empty() ? json(nullptr) : json(source.file)},
          {"chosen_by", source.why},
          {"caps",
           {{"line", set.caps_line ? json(set.caps_line) : json(nullptr)},
            {"knobs", values_of(caps_knobs(set.caps))}}},
          {"overridden_builtins", overridden_builtins(set)},
          {"profiles", profiles}};
}

// The profiles= of the first active line in `plugstack` that loads spank_stoker.so.
ProfilesSource from_plugstack(const std::string& plugstack) {
  std::ifstream in(plugstack);
  if (!in) return {"", "no " + plugstack};
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::istringstream words(line);
    std::string control, path, word;
    if (!(words >> control >> path) || control.starts_with("#")) continue;
    if (!path.ends_with("spank_stoker.so")) continue;
    const std::string where = plugstack + ":" + std::to_string(line_no);
    while (words >> word)
      if (word.starts_with("profiles="))
        return {word.substr(9), "the profiles= of the plugin's line at " + where};
    return {"", "the plugin's line at " + where + " names no profiles file"};
  }
  return {"", plugstack + " has no active line for spank_stoker.so"};
}

}  // namespace

ProfilesSource find_profiles_file(const std::optional<std::string>& flag,
                                  const std::string& plugstack) {
  if (flag) return {*flag, "given with --profiles"};
  if (auto file = profiles_file_from(process_env())) return {*file, "from STOKER_PROFILES"};
  return from_plugstack(plugstack);
}

void list_profiles(const ProfilesSource& source, bool json_output) {
  const ProfileSet set =
      profiles_or_builtins(source.file.empty() ? std::nullopt : std::optional(source.file));
  if (json_output)
    std::printf("%s\n", listing_json(set, source).dump(2).c_str());
  else
    print_listing(set, source);
}

}  // namespace stoker::cli
