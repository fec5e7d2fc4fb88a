// The run record and the job log line as JSON, written plainly and read strictly: the
// collector reads user-written records as root, so every key is known, typed and bounded.
#include "stoker/record/run_record.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "stoker/common/error.hpp"
#include "stoker/common/json_scan.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"
#include "stoker/record/run_measures.hpp"

namespace stoker {

namespace {

using json = nlohmann::json;

constexpr size_t kMaxText = 256;         // the longest string value a record may hold
constexpr int kMaxDepth = 4;             // log line > record > timeline > point
constexpr uint64_t kMaxSmall = 1000000;  // counts of cores, workers, batches in flight

std::string dump(const json& j) {
  return j.dump(-1, ' ', true, json::error_handler_t::replace);
}

std::string cut(std::string s, size_t n) {
  if (s.size() > n) s.resize(n);
  return s;
}

// Reads the members of one object, each once and of its type; finish() refuses the others.
class Reader {
 public:
  using Tokens = std::vector<JsonToken>;
  Reader(const Tokens& t, size_t object, std::string where) : t_(t), where_(std::move(where)) {
    if (t_[object].kind != JsonToken::ObjectStart) fail("is not a JSON object");
    members_.reserve(48);  // a record has about 40 keys: one allocation, not seven
    for (size_t i = object + 1; i < static_cast<size_t>(t_[object].close);) {
      members_.push_back({t_[i].key, i, false});
      i = t_[i].close >= 0 ? static_cast<size_t>(t_[i].close) + 1 : i + 1;
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_, what, "the file is not a stoker run record (or was cut short)");
  }
  const JsonToken* find(std::string_view key) {
    const std::optional<size_t> at = find_at(key);
    return at ? &t_[*at] : nullptr;
  }
  // Keys are asked for in the order the writer writes them: the search starts after the
  // last one found, so a record's ~40 keys cost ~40 comparisons, not ~800.
  std::optional<size_t> find_at(std::string_view key) {
    for (size_t n = 0; n < members_.size(); ++n) {
      Member& m = members_[(next_ + n) % members_.size()];
      if (m.key != key) continue;
      m.seen = true;
      next_ = (next_ + n + 1) % members_.size();
      return m.at;
    }
    return std::nullopt;
  }
  size_t need_at(std::string_view key) {
    const std::optional<size_t> at = find_at(key);
    if (!at) fail("has no \"" + std::string(key) + "\"");
    return *at;
  }
  const JsonToken& need(std::string_view key) { return t_[need_at(key)]; }
  std::string text(const JsonToken& v, std::string_view key) const {
    if (v.kind != JsonToken::String) fail("\"" + std::string(key) + "\" is not a string");
    std::string s = json_string(v);
    if (s.size() > kMaxText) fail("\"" + std::string(key) + "\" is longer than 256 bytes");
    return s;
  }
  std::string text(std::string_view key) { return text(need(key), key); }
  uint64_t whole(std::string_view key) { return whole_of(need(key), key); }
  std::optional<uint64_t> maybe_whole(std::string_view key) {
    const JsonToken* v = find(key);
    return v ? std::optional(whole_of(*v, key)) : std::nullopt;
  }
  int small(std::string_view key) {
    const uint64_t v = whole(key);
    if (v > kMaxSmall) fail("\"" + std::string(key) + "\" is out of range");
    return static_cast<int>(v);
  }
  double number(std::string_view key, double hi) {
    const std::optional<double> d = json_number(need(key));
    if (!d) fail("\"" + std::string(key) + "\" is not a number");
    if (*d < 0 || *d > hi) fail("\"" + std::string(key) + "\" is out of range");
    return *d;
  }
  bool flag(std::string_view key) {
    const JsonToken& v = need(key);
    if (v.kind != JsonToken::True && v.kind != JsonToken::False)
      fail("\"" + std::string(key) + "\" is not true or false");
    return v.kind == JsonToken::True;
  }
  void finish() const {
    // A key nobody asked for: unknown, or a known one given twice (only its first is read).
    for (const Member& m : members_) {
      if (m.seen) continue;
      const std::string key = cut(std::string(m.key), 40);
      for (const Member& other : members_) {
        if (other.seen && other.key == m.key) fail("has \"" + key + "\" twice");
      }
      fail("has an unknown key \"" + key + "\"");
    }
  }

 private:
  uint64_t whole_of(const JsonToken& v, std::string_view key) const {
    const std::optional<uint64_t> w = json_whole(v);
    if (!w) fail("\"" + std::string(key) + "\" is not a whole number");
    return *w;
  }
  const Tokens& t_;
  std::string where_;
  struct Member {
    std::string_view key;
    size_t at;
    bool seen;  // asked for by name: a known key
  };
  std::vector<Member> members_;
  size_t next_ = 0;
};

// The tokens of `text`, in a buffer of this thread's that keeps its capacity from line to line.
// `keep_depth`: scan_json_into's.
const std::vector<JsonToken>& scan_bounded(std::string_view text, const std::string& where,
                                           int keep_depth = kMaxDepth) {
  if (text.size() > kMaxRecordBytes) {
    throw Error(where, "is larger than " + std::to_string(kMaxRecordBytes) + " bytes",
                "the file is not a stoker run record");
  }
  if (text.empty()) throw Error(where, "is empty", "the file is not a stoker run record");
  thread_local std::vector<JsonToken> tokens;
  std::string error;
  if (!scan_json_into(text, kMaxDepth, tokens, &error, keep_depth)) {
    throw Error(where, "is not valid JSON (cut short or garbled): " + error,
                "the file is not a stoker run record");
  }
  return tokens;
}

json record_json(const RunRecord& r) {
  json plan = json::object();
  for (const auto& [name, value] : plan_to_env(r.plan)) plan[name] = value;
  json tl = json::array();
  for (const TimelinePoint& p : r.timeline) tl.push_back({p.t, p.wait, p.depth});
  json j = {{"v", RunRecord::kVersion},
            {"job", r.job},
            {"step", r.step},
            {"node", r.node},
            {"rank", r.rank},
            {"plan", plan},
            {"prefetch_max_reason", r.prefetch_max_reason},
            {"end", r.end},
            {"timeline", tl}};
  for (const MeasureRow& row : run_measures()) {
    std::visit(
        [&](auto member) {
          using Member = decltype(member);
          if constexpr (std::is_same_v<Member, std::optional<uint64_t> RunRecord::*>) {
            if (r.*member) j[row.name] = *(r.*member);
          } else if constexpr (!std::is_same_v<Member, std::monostate>) {
            j[row.name] = r.*member;
          }
        },
        row.record);
  }
  return j;
}

// The record's measured part: each run_measures() row with a record member, by its name.
void read_measures(Reader& in, RunRecord& r) {
  for (const MeasureRow& row : run_measures()) {
    std::visit(
        [&](auto member) {
          using Member = decltype(member);
          if constexpr (std::is_same_v<Member, uint64_t RunRecord::*>) {
            r.*member = in.whole(row.name);
          } else if constexpr (std::is_same_v<Member, int RunRecord::*>) {
            r.*member = in.small(row.name);
          } else if constexpr (std::is_same_v<Member, double RunRecord::*>) {
            r.*member = in.number(row.name, row.record_max);
          } else if constexpr (std::is_same_v<Member, std::optional<uint64_t> RunRecord::*>) {
            r.*member = in.maybe_whole(row.name);
          }
        },
        row.record);
  }
}

// Version 2's plan: the STOKER_* variables, known ones only, each a string, read by read_plan.
Plan read_plan_map(const std::vector<JsonToken>& t, size_t object, const std::string& where,
                   Reader& record) {
  Reader in(t, object, where);
  std::map<std::string, std::string> vars;
  auto take = [&](const char* name) {
    if (const JsonToken* v = in.find(name)) vars[name] = in.text(*v, name);
  };
  take("STOKER_PLAN_VERSION");
  for (const PlanField& f : plan_fields()) take(f.env);
  in.finish();
  try {
    std::optional<Plan> plan = read_plan([&vars](const std::string& name) {
      const auto it = vars.find(name);
      return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    if (!plan) record.fail("has a \"plan\" without STOKER_PLAN_VERSION");
    plan->reasons.clear();  // read_plan's own "source" reason: the record keeps none
    return *plan;
  } catch (const Error& e) {
    record.fail(std::string("has a garbled \"plan\": ") + e.what());
  }
}

CpuSet cpu_list(Reader& in, const char* key) {
  const std::string text = in.text(key);
  try {
    return CpuSet::parse(text, key);
  } catch (const Error& e) {
    in.fail(std::string("has a garbled \"") + key + "\": " + e.what());
  }
}

// Version 1's plan: twelve fields by hand, "pin" for pin_memory; workers, prefetch_max and
// mem_budget were the loader's (read_v1_measured_plan).
Plan read_v1_plan(Reader& in) {
  Plan p;
  p.profile = in.text("profile");
  p.local_rank = in.small("local_rank");
  p.local_size = p.local_rank + 1;  // not recorded
  p.cpus = cpu_list(in, "cpus");
  p.main_cpus = cpu_list(in, "main_cpus");
  p.worker_cpus = cpu_list(in, "worker_cpus");
  p.numa = cpu_list(in, "numa").list();
  p.gpu = in.text("gpu");
  in.small("cores");  // the count of cpus
  p.prefetch = in.small("prefetch");
  p.pin_memory = in.flag("pin");
  return p;
}

RunRecord record_from(const std::vector<JsonToken>& t, size_t object, const std::string& where,
                      bool with_timeline) {
  Reader in(t, object, where);
  const uint64_t version = in.whole("v");
  if (version != 1 && version != 2) in.fail("has a record version other than 1 or 2");
  RunRecord r;
  r.job = in.text("job");
  r.step = in.text("step");
  r.node = in.text("node");
  r.rank = in.whole("rank");
  if (version == 1) {
    r.plan = read_v1_plan(in);
  } else {
    const size_t plan = in.need_at("plan");
    if (t[plan].kind != JsonToken::ObjectStart) in.fail("\"plan\" is not an object");
    r.plan = read_plan_map(t, plan, where, in);
  }
  r.prefetch_max_reason = in.text("prefetch_max_reason");
  read_measures(in, r);
  if (version == 1) {
    r.plan.workers = r.workers;
    r.plan.prefetch_max = r.prefetch_max;
    r.plan.mem_budget = r.mem_budget;
  }
  r.end = in.text("end");
  const size_t tl = in.need_at("timeline");
  auto bad_point = [&] { in.fail("a \"timeline\" point is not [seconds, wait share, depth]"); };
  if (t[tl].kind != JsonToken::ArrayStart) in.fail("\"timeline\" is not an array");
  for (size_t i = tl + 1; with_timeline && i < static_cast<size_t>(t[tl].close); i += 5) {
    if (r.timeline.size() == kMaxTimelinePoints) in.fail("\"timeline\" has over 64 points");
    if (t[i].kind != JsonToken::ArrayStart || t[i].close != static_cast<int>(i) + 4) bad_point();
    const std::optional<double> at = json_number(t[i + 1]), w = json_number(t[i + 2]);
    const std::optional<uint64_t> d = json_whole(t[i + 3]);
    if (!at || !w || !d) bad_point();
    if (*at < 0 || *w < 0 || *w > 1 || *d > kMaxSmall)
      in.fail("a \"timeline\" point is out of range");
    r.timeline.push_back({*at, *w, static_cast<int>(*d)});
  }
  in.finish();
  return r;
}

}  // namespace

std::string run_record_file(uint64_t rank) {
  return "rank-" + std::to_string(rank) + ".json";
}

std::string to_json(const RunRecord& r) {
  return dump(record_json(r));
}

RunRecord parse_run_record(std::string_view text, const std::string& where) {
  return record_from(scan_bounded(text, where), 0, where, true);
}

std::string to_json(const JobLogLine& l) {
  json j = {{"time", l.time}, {"job", l.job},      {"step", l.step},
            {"node", l.node}, {"user", l.user},    {"partition", l.partition},
            {"rank", l.rank}, {"status", l.status}};
  if (!l.problem.empty()) j["problem"] = cut(l.problem, 1000);
  if (l.record) j["record"] = record_json(*l.record);
  std::string text = dump(j);
  if (text.size() > kMaxLogLine && l.record) {
    j["record"]["timeline"] = json::array();
    text = dump(j);
  }
  return text;
}

JobLogLine parse_job_log_line(std::string_view text, const std::string& where, bool with_timeline) {
  // Without the timeline its points get no tokens (they are still checked as JSON); the
  // plan's variables are one level deeper than the record's keys.
  const std::vector<JsonToken>& t = scan_bounded(text, where, with_timeline ? kMaxDepth : 3);
  Reader in(t, 0, where);
  JobLogLine l;
  l.time = in.text("time");
  l.job = in.text("job");
  l.step = in.text("step");
  l.node = in.text("node");
  l.user = in.text("user");
  l.partition = in.text("partition");
  l.rank = in.whole("rank");
  l.status = in.text("status");
  if (const JsonToken* p = in.find("problem")) {
    if (p->kind != JsonToken::String) in.fail("\"problem\" is not a string");
    l.problem = cut(json_string(*p), 1000);
  }
  if (const std::optional<size_t> r = in.find_at("record"))
    l.record = record_from(t, *r, where, with_timeline);
  in.finish();
  return l;
}

}  // namespace stoker
