#include "node_svg.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "node_svg_text.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"
#include "svg_canvas.hpp"

namespace stoker::cli {

namespace {

// Sizes in pixels.
constexpr double kCoreMinW = 60, kStripeW = 26, kCoreH = 44, kDevW = 150, kDevH = 54, kGap = 6,
                 kPad = 12;
constexpr double kHead = 24, kLine = 19, kMaxRowWidth = 1300;
constexpr int kCoresPerRow = 8, kDevsPerRow = 4;
const std::string kInk = "#222222", kMuted = "#666666", kFrame = "#9a9a9a";

using Font = SvgCanvas::Font;
using Style = SvgCanvas::Style;

// Which ranks use what: plan indexes (0 = the lowest local rank), by core, GPU and NIC.
class Ranks {
 public:
  Ranks(const Topology& t, const std::vector<Plan>& plans) {
    for (const Plan& p : plans) plans_.push_back(&p);
    std::sort(plans_.begin(), plans_.end(),
              [](const Plan* a, const Plan* b) { return a->local_rank < b->local_rank; });
    for (const Plan* p : plans_) away_.push_back(away_cpus(t, *p));
  }
  // A rank's worker-only CPUs on NUMA nodes its training loop is not on: spilled or borrowed.
  static CpuSet away_cpus(const Topology& t, const Plan& p) {
    std::vector<int> main_nodes;
    for (const Core& c : t.cores)
      if (c.pus.intersects(p.main_cpus)) main_nodes.push_back(c.numa);
    CpuSet away;
    for (const Core& c : t.cores)
      if (c.pus.intersects(p.worker_cpus) && !c.pus.intersects(p.main_cpus) &&
          std::find(main_nodes.begin(), main_nodes.end(), c.numa) == main_nodes.end())
        away = away | (c.pus & p.worker_cpus);
    return away;
  }
  const CpuSet& away(size_t i) const { return away_[i]; }
  bool empty() const { return plans_.empty(); }
  const std::vector<const Plan*>& plans() const { return plans_; }
  std::string colour(size_t i) const { return rank_colour(static_cast<int>(i)); }

  // Every rank with a PU of this core: its plan index, whether its training loop runs there,
  // and whether the core is a worker core away from that loop's node (spilled).
  struct OnCore {
    size_t i;
    bool main, away;
  };
  std::vector<OnCore> on_core(const Core& c) const {
    std::vector<OnCore> out;
    for (size_t i = 0; i < plans_.size(); ++i)
      if (plans_[i]->cpus.intersects(c.pus))
        out.push_back({i, plans_[i]->main_cpus.intersects(c.pus), away_[i].intersects(c.pus)});
    return out;
  }
  std::vector<size_t> on_gpu(const Gpu& g) const {
    return matching([&](const Plan& p) { return p.gpu == g.pci_bus_id; });
  }
  std::vector<size_t> on_nic(const Nic& n) const {
    return matching([&](const Plan& p) {
      return std::find(p.nics.begin(), p.nics.end(), n.name) != p.nics.end();
    });
  }
  std::string names(const std::vector<size_t>& idx) const {
    std::vector<int> ranks;
    for (size_t i : idx) ranks.push_back(plans_[i]->local_rank);
    if (ranks.empty()) return "no rank";
    return (ranks.size() == 1 ? "rank " : "ranks ") + join_numbers(ranks, ", ");
  }

 private:
  template <typename Pred>
  std::vector<size_t> matching(Pred pred) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < plans_.size(); ++i)
      if (pred(*plans_[i])) out.push_back(i);
    return out;
  }
  std::vector<const Plan*> plans_;
  std::vector<CpuSet> away_;
};

// A NUMA node's box (or the box of cores hwloc gives no NUMA node), and a package's.
struct NumaBox {
  std::string label;
  std::vector<const Core*> cores;
  std::vector<const Gpu*> gpus;
  std::vector<const Nic*> nics;
  double w = 0, h = 0;
};
struct PackageBox {
  std::string label;
  std::vector<NumaBox> numa;
  double w = 0, h = 0;
};

// Columns x rows of `n` items `item_w` x `item_h` apart by kGap: {width, height}.
std::pair<double, double> grid_size(size_t n, int per_row, double item_w, double item_h) {
  if (n == 0) return {0, 0};
  const size_t cols = std::min<size_t>(n, per_row), rows = (n + per_row - 1) / per_row;
  return {cols * item_w + (cols - 1) * kGap, rows * item_h + (rows - 1) * kGap};
}

void size_numa(NumaBox& b, double core_w) {
  const auto [cw, ch] = grid_size(b.cores.size(), kCoresPerRow, core_w, kCoreH);
  const auto [dw, dh] = grid_size(b.gpus.size() + b.nics.size(), kDevsPerRow, kDevW, kDevH);
  b.w = std::max({cw, dw, 190.0}) + 2 * kPad;
  b.h = kHead + (b.cores.empty() ? kLine : ch) + (dh > 0 ? kGap * 2 + dh : 0) + kPad;
}

void size_package(PackageBox& p, double core_w) {
  p.w = 190;
  p.h = kHead + (p.numa.empty() ? kLine : 0);
  for (NumaBox& n : p.numa) {
    size_numa(n, core_w);
    p.w = std::max(p.w, n.w);
    p.h += n.h + kGap;
  }
  p.w += 2 * kPad;
  p.h += kPad - kGap;
}

// Packages with their NUMA boxes; GPUs and NICs under the box of their first NUMA node.
// What has no box to go in (a device without NUMA locality) is left in `loose_*`.
struct Layout {
  double core_w = kCoreMinW;  // wide enough for a stripe per rank on the busiest core
  std::vector<PackageBox> packages;
  std::vector<const Gpu*> loose_gpus;
  std::vector<const Nic*> loose_nics;
};

Layout build_layout(const Topology& t, const Ranks& ranks) {
  Layout l;
  for (const Core& c : t.cores) {  // a stripe per rank on it, and its PU list
    const double stripes = kStripeW * static_cast<double>(ranks.on_core(c).size());
    l.core_w = std::max({l.core_w, 8 + stripes, 10 + 6.4 * c.pus.to_string().size()});
  }
  std::map<int, PackageBox> packages;             // by logical index; -1: not under a package
  std::map<int, std::pair<int, size_t>> numa_at;  // os_index -> (package, box)
  for (const Package& p : t.packages)
    packages[p.logical_index].label = "Package " + std::to_string(p.logical_index);
  for (const NumaNode& n : t.numa_nodes) {
    PackageBox& p = packages[n.package];
    std::string label =
        "NUMA " + std::to_string(n.os_index) + " · " + values::format_bytes(n.memory_bytes);
    if (!n.subtype.empty()) label += " " + n.subtype;
    numa_at[n.os_index] = {n.package, p.numa.size()};
    p.numa.push_back({label, {}, {}, {}});
  }
  for (const Core& c : t.cores) {
    // A core hwloc gives no NUMA node goes in its package's box of such cores.
    const int key = c.numa >= 0 ? c.numa : -1000 - c.package;
    auto at = numa_at.find(key);
    if (at == numa_at.end()) {
      numa_at[key] = {c.package, packages[c.package].numa.size()};
      packages[c.package].numa.push_back({"cores without a NUMA node", {}, {}, {}});
      at = numa_at.find(key);
    }
    packages[at->second.first].numa[at->second.second].cores.push_back(&c);
  }
  auto box_of = [&](const std::vector<int>& numa) -> NumaBox* {
    if (numa.empty() || !numa_at.count(numa.front())) return nullptr;
    const auto [pkg, idx] = numa_at[numa.front()];
    return &packages[pkg].numa[idx];
  };
  for (const Gpu& g : t.gpus) {
    if (NumaBox* b = box_of(g.numa))
      b->gpus.push_back(&g);
    else
      l.loose_gpus.push_back(&g);
  }
  for (const Nic& n : t.nics) {
    if (NumaBox* b = box_of(n.numa))
      b->nics.push_back(&n);
    else
      l.loose_nics.push_back(&n);
  }
  for (auto& [index, p] : packages) {
    if (p.label.empty()) p.label = "not in a package";
    size_package(p, l.core_w);
    l.packages.push_back(std::move(p));
  }
  // What is in no package goes last.
  if (!l.packages.empty() && packages.begin()->first < 0)
    std::rotate(l.packages.begin(), l.packages.begin() + 1, l.packages.end());
  return l;
}

class Painter {
 public:
  Painter(const Topology& t, const Ranks& ranks, double core_w)
      : t_(t), ranks_(ranks), core_w_(core_w) {}

  void core(double x, double y, const Core& c) {
    canvas_.rect(x, y, core_w_, kCoreH, {"#ffffff", kFrame, 1, 3});
    canvas_.text(x + core_w_ / 2, y + 14, c.pus.to_string(), {10.5, kInk, false, "middle"});
    const auto users = ranks_.on_core(c);
    if (users.empty()) return;
    const double sy = y + 19, sh = kCoreH - 22, sw = (core_w_ - 4) / users.size();
    for (size_t k = 0; k < users.size(); ++k) {
      const auto [i, main, away] = users[k];
      const std::string colour = ranks_.colour(i);
      const double sx = x + 2 + k * sw;
      // A spilled core: a light tint of the rank's colour, hatched in it, label in italics.
      const std::string fill = away ? tint(colour, 0.3) : colour;
      canvas_.rect(sx, sy, sw, sh, {fill, away ? colour : "#ffffff", away ? 1.5 : 0.5, 0});
      for (double d = 6; away && d < sw + sh; d += 7)  // hatching, bottom-left to top-right
        canvas_.line(sx + std::max(0.0, d - sh), sy + sh - std::min(d, sh), sx + std::min(d, sw),
                     sy + sh - std::max(0.0, d - sw), tint(colour, 0.75), 1);
      if (sw >= 13) {
        const std::string label = std::to_string(ranks_.plans()[i]->local_rank) + (main ? "*" : "");
        canvas_.text(
            sx + sw / 2, sy + sh / 2 + 4.5, label,
            {sw >= 22 ? 12.0 : 10.0, away ? kInk : text_colour_on(colour), main, "middle"});
      }
    }
  }

  // A GPU or NIC: its name, a detail line, and the ranks using it in their colours.
  void device(double x, double y, const std::string& name, const std::string& detail,
              const std::vector<size_t>& users) {
    // One rank: its colour; shared: neutral, with a chip per rank below.
    const bool one = users.size() == 1;
    const std::string colour = one ? ranks_.colour(users.front()) : kFrame;
    canvas_.rect(x, y, kDevW, kDevH,
                 {one ? tint(colour, 0.28) : "#f6f6f6", colour, one ? 2.0 : 1.0, 5});
    canvas_.text(x + 8, y + 17, name, {12, kInk, true});
    canvas_.text(x + 8, y + 32, detail, {10.5, kMuted});
    if (ranks_.empty()) return;
    double cx = x + 8;
    for (size_t i : users) {  // one colour chip per rank
      canvas_.rect(cx, y + 39, 9, 9, {ranks_.colour(i), "none", 0, 2});
      cx += 11;
    }
    canvas_.text(cx + 2, y + 47.5, ranks_.names(users), {10.5, kInk});
  }

  void devices(double x, double y, const std::vector<const Gpu*>& gpus,
               const std::vector<const Nic*>& nics) {
    int k = 0;
    auto next = [&](double& dx, double& dy) {
      dx = x + (k % kDevsPerRow) * (kDevW + kGap);
      dy = y + (k / kDevsPerRow) * (kDevH + kGap);
      ++k;
    };
    double dx = 0, dy = 0;
    for (const Gpu* g : gpus) {
      next(dx, dy);
      const size_t index = static_cast<size_t>(g - t_.gpus.data());
      std::string name = "GPU " + std::to_string(index);
      if (!g->os_names.empty()) name += " (" + g->os_names.front() + ")";
      std::string detail = g->pci_bus_id;
      if (g->numa.size() > 1) detail += " · NUMA " + join_numbers(g->numa);
      device(dx, dy, name, detail, ranks_.on_gpu(*g));
    }
    for (const Nic* n : nics) {
      next(dx, dy);
      device(dx, dy, n->name, n->kind == "infiniband" ? "InfiniBand NIC" : "Ethernet NIC",
             ranks_.on_nic(*n));
    }
  }

  void numa(double x, double y, const NumaBox& b) {
    canvas_.rect(x, y, b.w, b.h, {"#eef4ea", "#7aa36a", 1.2, 6});
    canvas_.text(x + kPad, y + 17, b.label, {12, kInk, true});
    double cy = y + kHead;
    if (b.cores.empty()) {
      canvas_.text(x + kPad, cy + 13, "memory only (no cores)", {11, kMuted});
      cy += kLine;
    }
    for (size_t k = 0; k < b.cores.size(); ++k)
      core(x + kPad + (k % kCoresPerRow) * (core_w_ + kGap),
           cy + (k / kCoresPerRow) * (kCoreH + kGap), *b.cores[k]);
    cy += grid_size(b.cores.size(), kCoresPerRow, core_w_, kCoreH).second;
    if (!b.gpus.empty() || !b.nics.empty()) devices(x + kPad, cy + 2 * kGap, b.gpus, b.nics);
  }

  void package(double x, double y, const PackageBox& p) {
    canvas_.rect(x, y, p.w, p.h, {"#f7f7f7", "#5f6f80", 1.5, 8});
    canvas_.text(x + kPad, y + 17, p.label, {13, kInk, true});
    if (p.numa.empty()) canvas_.text(x + kPad, y + kHead + 13, "no cores listed", {11, kMuted});
    double ny = y + kHead;
    for (const NumaBox& n : p.numa) {
      numa(x + kPad, ny, n);
      ny += n.h + kGap;
    }
  }

  SvgCanvas& canvas() { return canvas_; }

 private:
  const Topology& t_;
  const Ranks& ranks_;
  double core_w_;
  SvgCanvas canvas_;
};

// Packages in rows no wider than kMaxRowWidth; returns the machine box's {width, height}.
std::pair<double, double> draw_packages(Painter& paint, const Layout& l, double x0, double y0) {
  double x = x0, y = y0, row_h = 0, width = 0;
  for (const PackageBox& p : l.packages) {
    if (x > x0 && x - x0 + p.w > kMaxRowWidth) {
      x = x0;
      y += row_h + kPad;
      row_h = 0;
    }
    paint.package(x, y, p);
    x += p.w + kPad;
    width = std::max(width, x - x0 - kPad);
    row_h = std::max(row_h, p.h);
  }
  return {width, y + row_h - y0};
}

}  // namespace

std::string node_svg(const Topology& t, const std::vector<Plan>& plans, const std::string& name) {
  const Ranks ranks(t, plans);
  const Layout layout = build_layout(t, ranks);
  Painter paint(t, ranks, layout.core_w);
  SvgCanvas& c = paint.canvas();
  const double x0 = 20;
  double y = 30;
  c.text(x0, y, name + ": " + summary(t), {16, kInk, true});
  y += 22;
  const std::string title = name + ": " + summary(t);
  std::string sub = "Each core shows its PUs (OS CPU numbers).";
  if (!ranks.empty())
    sub = "Plan: profile " + ranks.plans().front()->profile + ", " + count(plans.size(), "rank") +
          ". Each core shows its PUs and the ranks on it (* = the rank's training loop).";
  c.text(x0, y, sub, {12, kMuted});
  // Text is about 0.6 em wide a character: keep the headings inside the picture.
  double w0 = std::max(title.size() * 16 * 0.6, sub.size() * 12 * 0.58);
  bool spilled = false;
  for (size_t i = 0; i < ranks.plans().size(); ++i) spilled = spilled || !ranks.away(i).empty();
  if (spilled) {
    const std::string note =
        "Hatched: a rank's worker cores spilled from a NUMA node without its GPU (its training "
        "loop and memory stay on the GPU's node).";
    c.text(x0, y + 17, note, {12, kMuted});
    w0 = std::max(w0, note.size() * 12 * 0.58);
    y += 17;
  }
  y += 14;
  auto [w, h] = draw_packages(paint, layout, x0, y);
  y += h;
  if (!layout.loose_gpus.empty() || !layout.loose_nics.empty()) {
    c.text(x0, y + 22, "devices without NUMA locality", {12, kInk, true});
    paint.devices(x0, y + 30, layout.loose_gpus, layout.loose_nics);
    const auto [dw, dh] =
        grid_size(layout.loose_gpus.size() + layout.loose_nics.size(), kDevsPerRow, kDevW, kDevH);
    w = std::max(w, dw);
    y += 30 + dh;
  }
  y += 16;
  for (size_t i = 0; i < ranks.plans().size(); ++i) {
    const std::string colour = ranks.colour(i);
    c.rect(x0, y + 4, 14, 14, {colour, "none", 0, 3});
    const std::string line = legend_line(*ranks.plans()[i], ranks.away(i));
    c.text(x0 + 22, y + 16, line, {12, kInk});
    w0 = std::max(w0, 22 + line.size() * 12 * 0.58);
    y += kLine + 2;
  }
  return c.document(std::max(w, w0) + 2 * x0, y + 10, title);
}

void write_svg(const std::string& path, const std::string& svg) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << svg;
  if (!out || !out.flush())
    throw Error(path, std::string("cannot write the picture: ") + std::strerror(errno),
                "give a writable path for --svg");
}

}  // namespace stoker::cli
