#include "plan_whatif.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "node_svg.hpp"
#include "plan_json.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"

namespace stoker::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct NodePlans {
  std::string name;  // the XML's file name without .xml, or "this machine"
  std::string topology;
  std::vector<LocalPlan> ranks;
};

// Cores of the topology with a PU in the plan's CPUs.
int cores_of(const LocalPlan& lp) {
  return static_cast<int>(
      std::count_if(lp.topology->cores.begin(), lp.topology->cores.end(),
                    [&](const Core& c) { return c.pus.intersects(lp.plan.cpus); }));
}

NodePlans plan_node(const std::optional<std::string>& xml, const WhatIf& w,
                    const PlanRequest& base) {
  NodePlans node;
  node.topology = xml.value_or("this machine");
  node.name = xml ? fs::path(*xml).stem().string() : "this machine";
  for (int r = 0; r < w.local_size; ++r) {
    if (w.local_rank && r != *w.local_rank) continue;
    PlanRequest req = base;
    req.topology_xml = xml;
    req.local_rank = r;
    req.local_size = w.local_size;
    try {
      node.ranks.push_back(plan_for_this_process(req));
    } catch (const Error& e) {  // say which of the nodes cannot be planned
      if (!xml || e.where().starts_with(*xml)) throw;
      throw Error(*xml + ": " + e.where(), e.problem(), e.todo());
    }
  }
  return node;
}

// One column of the table: its heading, its --json key, and the rank's cell in both forms.
struct Cell {
  const char* heading;
  const char* key;
  std::string text;
  json value;
};

// The node, then the plan's what-if columns (plan_fields.hpp) with the cores after the CPUs.
std::vector<Cell> cells(const NodePlans& node, const LocalPlan& lp) {
  std::vector<Cell> out{{"node", "node", node.name, node.name}};
  for (ShownField& f : show(lp.plan, PlanView::WhatIf)) {
    out.push_back({f.label, f.field.name, std::move(f.text), field_json(f.field, lp.plan)});
    if (std::string_view(f.field.name) == "cpus") {
      const int cores = cores_of(lp);
      out.push_back({"cores", "cores", std::to_string(cores), cores});
    }
  }
  return out;
}

void print_table(const std::vector<NodePlans>& nodes, const WhatIf& w) {
  std::vector<std::vector<std::string>> lines(1);
  for (const NodePlans& n : nodes) {
    for (const LocalPlan& lp : n.ranks) {
      lines.emplace_back();
      for (const Cell& c : cells(n, lp)) {
        if (lines.size() == 2) lines.front().push_back(c.heading);
        lines.back().push_back(c.text);
      }
    }
  }
  std::vector<size_t> width(lines.front().size());
  for (const auto& line : lines)
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  const Plan& first = nodes.front().ranks.front().plan;
  std::printf("stoker plan: profile %s, %d rank%s per node, batches of %s\n\n",
              first.profile.c_str(), w.local_size, w.local_size == 1 ? "" : "s",
              values::format_bytes(first.batch_bytes).c_str());
  for (const auto& line : lines) {
    std::string text;
    for (size_t c = 0; c < line.size(); ++c)
      text +=
          c + 1 < line.size() ? line[c] + std::string(width[c] + 2 - line[c].size(), ' ') : line[c];
    std::printf("%s\n", text.c_str());
  }
}

json table_json(const std::vector<NodePlans>& nodes, const WhatIf& w) {
  json rows = json::array();
  for (const NodePlans& n : nodes) {
    for (const LocalPlan& lp : n.ranks) {
      json row = {{"topology", n.topology},
                  {"batch_bytes", lp.plan.batch_bytes},
                  {"profile", lp.plan.profile}};
      for (const Cell& c : cells(n, lp)) row[c.key] = c.value;
      rows.push_back(row);
    }
  }
  return {{"local_size", w.local_size}, {"rows", rows}};
}

}  // namespace

bool wants_whole_nodes(size_t topologies, bool svg, bool size_given, bool rank_given) {
  return topologies > 1 || svg || (size_given && !rank_given);
}

std::string svg_path_for(const std::string& file, const std::string& topology, size_t count) {
  if (count <= 1) return file;
  const fs::path p(file);
  const std::string ext = p.has_extension() ? p.extension().string() : ".svg";
  return (p.parent_path() / (p.stem().string() + "-" + fs::path(topology).stem().string() + ext))
      .string();
}

void run_whatif(const WhatIf& w, const PlanRequest& base) {
  if (w.local_size < 1)
    throw Error("--local-size", std::to_string(w.local_size) + " ranks", "give 1 or more");
  if (w.local_rank && (*w.local_rank < 0 || *w.local_rank >= w.local_size))
    throw Error("--local-rank",
                std::to_string(*w.local_rank) + " is not below --local-size " +
                    std::to_string(w.local_size),
                "give a rank from 0 to " + std::to_string(w.local_size - 1));
  std::vector<NodePlans> nodes;
  if (w.topologies.empty()) nodes.push_back(plan_node(std::nullopt, w, base));
  for (const std::string& xml : w.topologies) nodes.push_back(plan_node(xml, w, base));
  if (w.json)
    std::printf("%s\n", table_json(nodes, w).dump(2).c_str());
  else
    print_table(nodes, w);
  if (w.svg.empty()) return;
  for (const NodePlans& n : nodes) {
    std::vector<Plan> plans;
    for (const LocalPlan& lp : n.ranks) plans.push_back(lp.plan);
    const std::string path = svg_path_for(w.svg, n.topology, nodes.size());
    write_svg(path,
              node_svg(*n.ranks.front().topology, plans, fs::path(n.topology).filename().string()));
    if (!w.json) std::printf("\npicture of %s: %s\n", n.name.c_str(), path.c_str());
  }
}

}  // namespace stoker::cli
