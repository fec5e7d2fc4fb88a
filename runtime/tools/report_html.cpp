// `stoker report --html`: one page, self-contained (no network, no script): a table of the
// job steps by input wait, then per step its plan, the suggested change, a plot of each
// rank's wait share and the worst rank's ring depth over time, and the node picture of the
// plan on its first node (node_svg, as `stoker plan --svg` draws it).
#include <algorithm>
#include <cstdio>
#include <map>

#include "node_svg.hpp"
#include "report_output.hpp"
#include "svg_canvas.hpp"

namespace stoker::cli {

namespace {

constexpr double kW = 640, kH = 220, kLeft = 50, kRight = 50, kTop = 24, kBottom = 36;
constexpr size_t kPlottedRanks = 8;

std::string inline_svg(const std::string& svg) {
  const size_t at = svg.find("<svg");
  return at == std::string::npos ? svg : svg.substr(at);
}

std::string num(double v, const char* format = "%.0f") {
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// Each rank's wait share (left axis, 0..100 %) and the worst rank's depth (right axis).
std::string plot(const StepSummary& s, const std::vector<RunRecord>& records) {
  SvgCanvas c;
  double t_max = 0;
  int d_max = 1;
  for (const RunRecord& r : records) {
    for (const TimelinePoint& p : r.timeline) t_max = std::max(t_max, p.t);
    d_max = std::max({d_max, r.prefetch_max, r.depth_reached});
  }
  if (t_max <= 0) t_max = 1;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto x = [&](double t) { return kLeft + pw * t / t_max; };
  auto y_wait = [&](double w) { return kTop + ph * (1 - w); };
  auto y_depth = [&](int d) { return kTop + ph * (1 - static_cast<double>(d) / d_max); };
  const SvgCanvas::Font small{10, "#555555"};
  c.rect(kLeft, kTop, pw, ph, {"none", "#999999", 1, 0});
  for (int k = 0; k <= 4; ++k) {
    const double w = k / 4.0;
    c.line(kLeft, y_wait(w), kLeft + pw, y_wait(w), "#eeeeee", 1);
    c.text(kLeft - 6, y_wait(w) + 4, num(100 * w) + " %", {10, "#555555", false, "end"});
    c.text(kLeft + pw + 6, y_wait(w) + 4, num(d_max * w, "%.0f"), small);
  }
  c.text(kLeft, kH - 8, "0 s", small);
  c.text(kLeft + pw, kH - 8, num(t_max, "%.1f") + " s", {10, "#555555", false, "end"});
  c.text(kLeft + pw / 2, kH - 8, "time since the first batch was asked for",
         {10, "#555555", false, "middle"});
  c.text(kLeft, 14, "input wait share per rank (solid)", {11, "#222222", true});
  c.text(kLeft + pw, 14, "ring depth, worst rank (dashed)", {11, "#222222", true, "end"});
  for (size_t i = 0; i < records.size() && i < kPlottedRanks; ++i) {
    const RunRecord& r = records[i];
    const bool worst = r.rank == s.worst.rank;
    std::vector<std::pair<double, double>> pts;
    for (const TimelinePoint& p : r.timeline) pts.emplace_back(x(p.t), y_wait(p.wait));
    c.polyline(pts, rank_colour(static_cast<int>(i)), worst ? 2.5 : 1.2);
    for (const auto& [px, py] : pts)
      c.circle(px, py, worst ? 3 : 2, rank_colour(static_cast<int>(i)));
    if (!worst) continue;
    std::vector<std::pair<double, double>> depth;
    for (const TimelinePoint& p : r.timeline) depth.emplace_back(x(p.t), y_depth(p.depth));
    c.polyline(depth, "#333333", 1.5, true);
  }
  return inline_svg(
      c.document(kW, kH, "job " + s.job + " step " + s.step + ": wait share and depth over time"));
}

// The step's ranks on its worst rank's node, as Plans for node_svg.
std::vector<Plan> node_plans(const std::vector<RunRecord>& records, const std::string& node) {
  std::vector<Plan> plans;
  for (const RunRecord& r : records) {
    if (r.node == node) plans.push_back(r.plan);
  }
  for (Plan& p : plans) p.local_size = static_cast<int>(plans.size());
  return plans;
}

std::string picture(const StepSummary& s, const std::vector<RunRecord>& records,
                    const Topology* topo, const std::string& note) {
  if (!topo) return "<p class=\"note\">No node picture: " + xml_escape(note) + "</p>\n";
  try {
    const std::vector<Plan> plans = node_plans(records, s.worst.node);
    return "<div class=\"node\">" +
           inline_svg(node_svg(*topo, plans,
                               "node " + s.worst.node + " (drawn on " + topo->source + ")")) +
           "</div>\n";
  } catch (const std::exception& e) {
    return "<p class=\"note\">No node picture: " + xml_escape(e.what()) + "</p>\n";
  }
}

const char* kStyle =
    "body{font-family:DejaVu Sans,Verdana,sans-serif;margin:2em;color:#222}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
    "th{background:#f0f0f0}.wait{font-weight:bold}.note{color:#777}"
    "section{margin:2em 0;border-top:2px solid #ddd}.node svg{max-width:100%;height:auto}";

}  // namespace

std::string report_html(const JobReport& rep, size_t top,
                        const std::vector<std::vector<RunRecord>>& records,
                        const Topology* topology, const std::string& topology_note) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>stoker report</title><style>" +
      std::string(kStyle) + "</style></head><body>\n<h1>Which jobs starve their GPUs</h1>\n";
  out += "<p>From " + xml_escape(rep.log) + ": " + std::to_string(rep.steps.size()) +
         " job step(s), " + std::to_string(rep.lines) + " line(s)" +
         (rep.broken ? ", " + std::to_string(rep.broken) + " broken line(s) skipped" : "") +
         ".</p>\n<table id=\"steps\"><tr><th>job</th><th>step</th><th>user</th><th>partition"
         "</th><th>ranks</th><th>input wait</th><th>samples/s</th><th>suggested change</th></tr>\n";
  const size_t shown = std::min(top, rep.steps.size());
  for (size_t i = 0; i < shown; ++i) {
    const StepSummary& s = rep.steps[i];
    out += "<tr><td><a href=\"#job-" + xml_escape(s.job) + "-" + xml_escape(s.step) + "\">" +
           xml_escape(s.job) + "</a></td><td>" + xml_escape(s.step) + "</td><td>" +
           xml_escape(s.user) + "</td><td>" + xml_escape(s.partition) + "</td><td>" +
           std::to_string(s.ranks) + "</td><td class=\"wait\">" + percent(s.wait()) + "</td><td>" +
           num(s.rate_sum) + "</td><td>" +
           (s.ranks ? xml_escape(advise(s.worst).text) : "no record") + "</td></tr>\n";
  }
  out += "</table>\n";
  for (size_t i = 0; i < shown; ++i) {
    const StepSummary& s = rep.steps[i];
    out += "<section id=\"job-" + xml_escape(s.job) + "-" + xml_escape(s.step) + "\"><h2>Job " +
           xml_escape(s.job) + " step " + xml_escape(s.step) + ": input wait " + percent(s.wait()) +
           "</h2>\n<p>user " + xml_escape(s.user) + ", partition " + xml_escape(s.partition) +
           ", " + std::to_string(s.ranks) + " rank(s); worst rank " + std::to_string(s.worst.rank) +
           " on " + xml_escape(s.worst.node) + " waited " + percent(s.worst.wait_share) + ".</p>\n";
    if (s.ranks) {
      out += "<p>Plan: " + xml_escape(plan_text(s.worst)) + "</p>\n<p><b>Suggested change:</b> " +
             xml_escape(advise(s.worst).text) + "</p>\n";
      out += "<div class=\"plot\">" + plot(s, records[i]) + "</div>\n";
      out += picture(s, records[i], topology, topology_note);
    }
    for (const std::string& p : s.problems) out += "<p class=\"note\">" + xml_escape(p) + "</p>\n";
  }
  out +=
      "<h2>Per user and partition</h2>\n<table id=\"groups\"><tr><th>user</th><th>partition"
      "</th><th>steps</th><th>mean wait</th><th>worst step</th></tr>\n";
  for (const GroupSummary& g : rep.groups) {
    out += "<tr><td>" + xml_escape(g.user) + "</td><td>" + xml_escape(g.partition) + "</td><td>" +
           std::to_string(g.steps) + "</td><td>" +
           percent(g.wait_sum / static_cast<double>(g.steps)) + "</td><td>" +
           xml_escape(g.worst_step) + " (" + percent(g.worst_wait) + ")</td></tr>\n";
  }
  return out + "</table>\n</body></html>\n";
}

}  // namespace stoker::cli
