#include "report_log.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <string_view>
#include <thread>
#include <utility>

#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"

namespace stoker::cli {

namespace {

constexpr uint64_t kShownBroken = 20;
constexpr size_t kShownProblems = 8;

bool wanted(const JobLogLine& l, const ReportFilter& f, const std::string& since) {
  return (since.empty() || l.time >= since) && (f.user.empty() || l.user == f.user) &&
         (f.partition.empty() || l.partition == f.partition) && (f.job.empty() || l.job == f.job);
}

std::string step_key(const std::string& job, const std::string& step) {
  return job + "." + step;
}

void add_line(StepSummary& s, JobLogLine& l) {
  if (s.job.empty()) {
    s.job = l.job;
    s.step = l.step;
    s.user = l.user;
    s.partition = l.partition;
  }
  s.time = std::max(s.time, l.time);
  s.nodes.insert(l.node);
  if (!l.record) {
    if (s.problems.size() < kShownProblems)
      s.problems.push_back("rank " + std::to_string(l.rank) + ": " + l.status + ": " + l.problem);
    ++s.problem_count;
    return;
  }
  RunRecord& r = *l.record;
  ++s.ranks;
  s.wait_sum += r.wait_share;
  s.rate_sum += r.samples_per_s;
  if (s.ranks == 1 || r.wait_share > s.worst.wait_share) {
    s.worst = std::move(r);
  }
}

std::vector<GroupSummary> groups_of(const std::vector<StepSummary>& steps) {
  std::map<std::pair<std::string, std::string>, GroupSummary> by;
  for (const StepSummary& s : steps) {
    GroupSummary& g = by[{s.user, s.partition}];
    g.user = s.user;
    g.partition = s.partition;
    ++g.steps;
    g.wait_sum += s.wait();
    if (g.worst_step.empty() || s.wait() > g.worst_wait) {
      g.worst_step = "job " + s.job + " step " + s.step;
      g.worst_wait = s.wait();
    }
  }
  std::vector<GroupSummary> out;
  for (auto& [key, g] : by) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const GroupSummary& a, const GroupSummary& b) {
    return a.wait_sum / a.steps > b.wait_sum / b.steps;
  });
  return out;
}

}  // namespace

std::string since_time(const std::string& since) {
  if (since.empty()) return "";
  const char unit = since.back();
  const std::optional<uint64_t> n =
      values::parse_whole(since.substr(0, since.size() - 1), 0, uint64_t{100} * 365 * 24 * 3600);
  const uint64_t per = unit == 'd' ? 86400 : unit == 'h' ? 3600 : unit == 'm' ? 60 : 0;
  if (n && per) {
    const std::time_t at = std::time(nullptr) - static_cast<std::time_t>(*n * per);
    std::tm tm{};
    ::gmtime_r(&at, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
  }
  const bool iso = since.size() >= 10 && std::isdigit(static_cast<unsigned char>(since[0])) &&
                   since[4] == '-' && since[7] == '-';
  if (!iso) {
    throw Error("--since '" + since + "'", "is neither a UTC date or time nor an age",
                "give e.g. 2026-12-01, 2026-12-01T10:00:00Z, 7d, 12h or 30m");
  }
  return since;
}

namespace {

// One thread's share of one log file: the lines that start within [begin, end) of it.
struct Chunk {
  const LogFile* file = nullptr;
  uint64_t begin = 0, end = 0;
  uint64_t lines = 0, broken = 0;
  std::vector<std::pair<uint64_t, std::string>> broken_shown;  // (line in the chunk, what)
  std::vector<StepSummary> steps;                              // in order of appearance
};

void read_chunk(const ReportFilter& filter, const std::string& since, Chunk& c) {
  std::ifstream in(c.file->path, std::ios::binary);
  uint64_t at = c.begin;
  std::string text;
  if (c.begin > 0) {  // a line under way at `begin` is the chunk before's
    in.seekg(static_cast<std::streamoff>(c.begin - 1));
    if (in.get() != '\n' && std::getline(in, text)) at += text.size() + 1;
  }
  std::map<std::string, size_t> index;  // step key -> steps
  while (at < c.end && std::getline(in, text)) {
    const uint64_t line_at = at;
    at += text.size() + 1;
    ++c.lines;
    if (text.empty()) continue;
    try {
      JobLogLine l = parse_job_log_line(text, "", false);  // FILE:LINE is named by the caller
      if (!wanted(l, filter, since)) continue;
      const auto [it, fresh] = index.emplace(step_key(l.job, l.step), c.steps.size());
      if (fresh) c.steps.emplace_back();
      StepSummary& step = c.steps[it->second];
      add_line(step, l);
      step.from = std::min(step.from, c.file->base + line_at);  // the files end to end
      step.to = std::max(step.to, c.file->base + at);
    } catch (const Error& e) {  // only parse_job_log_line throws stoker::Error here
      if (++c.broken <= kShownBroken) c.broken_shown.emplace_back(c.lines, e.problem());
    }
  }
}

// Adds `s` (the same step, from a later chunk) to `into`.
void merge_step(StepSummary& into, StepSummary&& s) {
  into.time = std::max(into.time, s.time);
  into.from = std::min(into.from, s.from);
  into.to = std::max(into.to, s.to);
  into.nodes.merge(s.nodes);
  if (s.ranks && (!into.ranks || s.worst.wait_share > into.worst.wait_share))
    into.worst = std::move(s.worst);
  into.ranks += s.ranks;
  into.wait_sum += s.wait_sum;
  into.rate_sum += s.rate_sum;
  for (std::string& p : s.problems) {
    if (into.problems.size() < kShownProblems) into.problems.push_back(std::move(p));
  }
  into.problem_count += s.problem_count;
}

// Puts steps[order[i]] at i for every i, following the permutation's cycles: each step is
// moved once or twice.
void apply_order(std::vector<StepSummary>& steps, std::vector<size_t> order) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    StepSummary first = std::move(steps[i]);
    for (size_t j = i;;) {
      const size_t from = order[j];
      order[j] = j;
      if (from == i) {
        steps[j] = std::move(first);
        break;
      }
      steps[j] = std::move(steps[from]);
      j = from;
    }
  }
}

// Threads for a log of `bytes`: a share of at least 16 MiB each, at most 8.
size_t chunk_count(uint64_t bytes) {
  const uint64_t by_size = bytes / (uint64_t{16} << 20) + 1;
  const uint64_t cores = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<size_t>(std::min<uint64_t>({by_size, cores, 8}));
}

}  // namespace

JobReport read_job_log(const LogSet& logs, const ReportFilter& filter, std::FILE* warn) {
  const std::string since = since_time(filter.since);
  std::vector<Chunk> chunks;  // each file's, in order
  for (const LogFile& f : logs.files()) {
    const size_t n = chunk_count(f.bytes);
    for (size_t i = 0; i < n; ++i) {
      Chunk& c = chunks.emplace_back();
      c.file = &f;
      c.begin = f.bytes * i / n;
      c.end = i + 1 == n ? UINT64_MAX : f.bytes * (i + 1) / n;
    }
  }
  // The chunks of every file, taken in turn by as many threads as one file's chunks may
  // have (chunk_count's bound: the cores, at most 8), this one among them.
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i; (i = next++) < chunks.size();) read_chunk(filter, since, chunks[i]);
  };
  std::vector<std::thread> threads;
  const size_t workers = std::min(chunks.size(), chunk_count(UINT64_MAX));
  for (size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();

  JobReport report;
  report.log = logs.describe();
  uint64_t file_lines = 0;  // lines of the file before this chunk, for FILE:LINE
  const LogFile* file = nullptr;
  size_t most_steps = 0;
  for (const Chunk& c : chunks) most_steps += c.steps.size();
  report.steps.reserve(most_steps);
  std::map<std::string, size_t> index;
  uint64_t shown = 0;
  for (Chunk& c : chunks) {
    if (c.file != file) file_lines = 0;
    file = c.file;
    for (const auto& [line, what] : c.broken_shown) {
      if (++shown <= kShownBroken)
        std::fprintf(warn, "stoker report: %s:%llu: %s; skipped\n", c.file->name.c_str(),
                     static_cast<unsigned long long>(file_lines + line), what.c_str());
    }
    file_lines += c.lines;
    report.lines += c.lines;
    report.broken += c.broken;
    for (StepSummary& s : c.steps) {
      const auto [it, fresh] = index.emplace(step_key(s.job, s.step), report.steps.size());
      if (fresh) {
        report.steps.push_back(std::move(s));
      } else {
        merge_step(report.steps[it->second], std::move(s));
      }
    }
  }
  if (report.broken > kShownBroken)
    std::fprintf(warn, "stoker report: %s: %llu more broken lines skipped\n", report.log.c_str(),
                 static_cast<unsigned long long>(report.broken - kShownBroken));
  // Highest wait first (to the percent shown); at the same wait, a step with a change to
  // make before one without.
  // The order is found on small keys (advise() once per step), then applied in place: a
  // summary is ~800 bytes with a dozen strings, too big to move n log n times.
  std::vector<std::pair<std::pair<long, bool>, size_t>> keys(report.steps.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const StepSummary& s = report.steps[i];
    const bool advised = s.ranks && advise(s.worst).kind != Advice::None;
    keys[i] = {{std::lround(100 * s.wait()), advised}, i};
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].second;
  apply_order(report.steps, std::move(order));
  report.groups = groups_of(report.steps);
  return report;
}

std::vector<std::vector<RunRecord>> step_records(const LogSet& logs,
                                                 const std::vector<StepSummary>& steps) {
  std::map<std::string, size_t> wanted_steps;
  for (size_t i = 0; i < steps.size(); ++i) wanted_steps[step_key(steps[i].job, steps[i].step)] = i;
  std::vector<std::vector<RunRecord>> out(steps.size());
  std::set<std::string, std::less<>> jobs;
  for (const StepSummary& s : steps) jobs.insert(s.job);
  // The byte ranges that hold the steps' lines, merged: a few megabytes of a large log.
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const StepSummary& s : steps) {
    if (s.from < s.to) ranges.emplace_back(s.from, s.to);
  }
  std::sort(ranges.begin(), ranges.end());
  std::string text;
  const std::string_view key = "\"job\":\"";
  for (const LogFile& f : logs.files()) {
    std::ifstream in(f.path, std::ios::binary);
    uint64_t done = 0;                // bytes of this file before this were read
    for (auto [from, to] : ranges) {  // in the files end to end: this file's part of each
      from = std::max({from, f.base, f.base + done});
      to = std::min(to, f.base + f.bytes);
      if (from >= to) continue;
      in.clear();
      in.seekg(static_cast<std::streamoff>(from - f.base));
      for (uint64_t at = from; at < to && std::getline(in, text); at += text.size() + 1) {
        // Most lines belong to steps not shown: look at the job's id before parsing.
        const size_t k = text.find(key);
        if (k == std::string::npos) continue;
        const size_t begin = k + key.size(), end = text.find('"', begin);
        if (end == std::string::npos) continue;
        if (!jobs.count(std::string_view(text).substr(begin, end - begin))) continue;
        try {
          JobLogLine l = parse_job_log_line(text, f.name);
          const auto it = wanted_steps.find(step_key(l.job, l.step));
          if (it != wanted_steps.end() && l.record) out[it->second].push_back(std::move(*l.record));
        } catch (const Error&) {
          // named once already by read_job_log
        }
      }
      done = to - f.base;
    }
  }
  for (auto& records : out) {
    std::sort(records.begin(), records.end(),
              [](const RunRecord& a, const RunRecord& b) { return a.rank < b.rank; });
  }
  return out;
}

}  // namespace stoker::cli
