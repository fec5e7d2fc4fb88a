// The page's table of what a run measures and the metrics file's series (reference.hpp).
#include <set>
#include <sstream>

#include "reference.hpp"
#include "stoker/loader/metrics.hpp"
#include "stoker/record/run_measures.hpp"

namespace stoker::reference {

namespace {

const char* unit_text(MeasureUnit unit) {
  switch (unit) {
    case MeasureUnit::Count:
      return "count";
    case MeasureUnit::Batches:
      return "batches";
    case MeasureUnit::Bytes:
      return "bytes";
    case MeasureUnit::Nanoseconds:
      return "ns in `stats()`, else seconds";
    case MeasureUnit::Ratio:
      return "share, 0 to 1";
    case MeasureUnit::PerSecond:
      return "per second";
    case MeasureUnit::Flag:
      return "flag";
  }
  return "?";
}

std::string stats_key(const MeasureRow& row) {
  if (!row.stats) return "";
  std::string key = std::string(row.group ? row.group : "") + (row.group ? "." : "") + row.stats;
  if (row.old_stats) key += "`, `" + std::string(row.old_stats) + "` (its old name)";
  return "`" + key + (row.old_stats ? "" : "`");
}

std::string series(const MeasureRow& row) {
  if (!row.prom) return "";
  return code(std::string(row.prom) +
              (row.prom_label ? "{" + std::string(row.prom_label) + "}" : "")) +
         " " + row.prom_type;
}

// The metrics file as the loader writes it, for what no row says: its own series and the
// labels on every sample.
struct FileFacts {
  std::vector<std::vector<std::string>> own;  // name, type, help
  std::string labels;
};

FileFacts file_facts() {
  std::set<std::string> from_rows;
  for (const MeasureRow& row : run_measures()) {
    if (row.prom) from_rows.insert(row.prom);
  }
  FileFacts facts;
  std::istringstream text(prometheus_text(LoaderStats{}, {"1", "0", "0", "n1"}, 0));
  std::string help;
  for (std::string line; std::getline(text, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      help = line.substr(7);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      const std::string rest = line.substr(7), name = rest.substr(0, rest.find(' '));
      if (!from_rows.count(name))
        facts.own.push_back(
            {code(name), rest.substr(name.size() + 1), cell(help.substr(name.size() + 1))});
    } else if (facts.labels.empty() && line.find('{') != std::string::npos) {
      const std::string inner =
          line.substr(line.find('{') + 1, line.find('}') - line.find('{') - 1);
      std::istringstream pairs(inner);
      for (std::string pair; std::getline(pairs, pair, ',');)
        facts.labels += std::string(facts.labels.empty() ? "" : ", ") + "`" +
                        pair.substr(0, pair.find('=')) + "`";
    }
  }
  return facts;
}

}  // namespace

void measures(std::ostream& out) {
  out << "## What a run measures\n\n";
  paragraph(out,
            "Every quantity the loader reports, one row of `run_measures()` "
            "(`runtime/src/record/run_measures.cpp`): its name (the run record's key), unit, "
            "key in Python's `Loader.stats()` (`a.b`: key `b` of the dict `stats()['a']`), "
            "Prometheus series and where `stoker report` shows it. A recorded quantity is in "
            "each rank's run record and the admin's job log. A renamed key is written under both "
            "names for one release.");
  std::vector<std::vector<std::string>> rows;
  for (const MeasureRow& row : run_measures()) {
    rows.push_back({code(row.name), unit_text(row.unit), stats_key(row), series(row),
                    row.record.index() == 0 ? "no" : "yes", cell(row.report ? row.report : ""),
                    cell(row.help)});
  }
  table(
      out,
      {"quantity", "unit", "`stats()` key", "Prometheus", "recorded", "`stoker report`", "meaning"},
      rows);
  const FileFacts facts = file_facts();
  paragraph(out, "The metrics file (`STOKER_METRICS`) holds the series above and its own:");
  table(out, {"series", "type", "meaning"}, facts.own);
  paragraph(out, "Labels on every sample: " + facts.labels +
                     " (empty values are left out). A live rate is "
                     "`rate(stoker_samples_total[5m])`.");
}

}  // namespace stoker::reference
