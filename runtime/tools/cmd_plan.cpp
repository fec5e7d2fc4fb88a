// `stoker plan`: this process's plan (from the plugin's STOKER_* environment, else
// computed here), or a what-if for any node from an hwloc XML file.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "command.hpp"
#include "plan_json.hpp"
#include "plan_list.hpp"
#include "plan_whatif.hpp"
#include "stoker/common/error.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/local_plan.hpp"
#include "stoker/plan/profiles.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker::cli {

namespace {

struct Args {
  std::vector<std::string> topologies;
  std::string svg, plugstack = kDefaultPlugstack;
  bool list = false;
  std::string cpus, gpus, profile, profiles, mem_limit, batch_bytes;
  // The values given to the tuning flags of kUserFlags (UserFlag::tunes), by row; "" where
  // not given. Applied in the table's order, as the plugin's messages name the first.
  std::vector<std::string> flag_values = std::vector<std::string>(kUserFlags.size());
  int local_rank = 0, local_size = 1;
  bool json = false, ignore_env = false;
  CLI::Option *topology_opt = nullptr, *cpus_opt = nullptr, *gpus_opt = nullptr,
              *rank_opt = nullptr, *size_opt = nullptr, *profile_opt = nullptr,
              *profiles_opt = nullptr, *mem_opt = nullptr, *batch_opt = nullptr;
};

uint64_t size_arg(const std::string& flag, const std::string& text) {
  auto v = values::parse_size(text);
  if (!v)
    throw Error(flag, "'" + text + "' is not a size above 0",
                "give bytes with an optional K, M, G, T (or KiB, MiB, GiB, TiB) suffix, e.g. 64G");
  return *v;
}

PlanRequest request_from(const Args& a) {
  PlanRequest r;
  if (a.topology_opt->count()) r.topology_xml = a.topologies.front();
  if (a.cpus_opt->count()) r.cpus = CpuSet::parse(a.cpus, "--cpus");
  if (a.gpus_opt->count()) r.gpus = a.gpus;
  if (a.rank_opt->count()) r.local_rank = a.local_rank;
  if (a.size_opt->count()) r.local_size = a.local_size;
  if (a.mem_opt->count()) r.mem_limit = size_arg("--mem-limit", a.mem_limit);
  if (a.batch_opt->count()) r.batch_bytes = size_arg("--batch-bytes", a.batch_bytes);
  if (a.profiles_opt->count()) r.profiles_file = a.profiles;

  // Overrides go through the plugin's own flag parser and checks, so the preview
  // rejects exactly what sbatch would.
  UserOptions opts;
  for (size_t i = 0; i < kUserFlags.size(); ++i)
    if (!a.flag_values[i].empty()) set_user_option(opts, kUserFlags[i].name, a.flag_values[i]);
  if (a.profile_opt->count()) {
    set_user_option(opts, "stoker-profile", a.profile);
    r.profile = a.profile;
  }
  validate_user_options(opts, profiles_or_builtins(r.profiles_file));
  r.overrides = opts.overrides;
  r.ignore_env = a.ignore_env;
  return r;
}

nlohmann::json to_json(const LocalPlan& lp) {
  const Plan& p = lp.plan;
  nlohmann::json reasons = nlohmann::json::array();
  for (const Reason& r : p.reasons) reasons.push_back({{"field", r.field}, {"text", r.text}});
  nlohmann::json out = {{"plan_version", Plan::kVersion}, {"source", lp.source}};
  for (const PlanField& f : plan_fields()) out[f.name] = field_json(f, p);
  out["reasons"] = reasons;
  return out;
}

void print_human(const LocalPlan& lp) {
  const Plan& p = lp.plan;
  std::printf("stoker plan: local rank %d of %d, profile %s\n  source: %s\n\n", p.local_rank,
              p.local_size, p.profile.c_str(), lp.source.c_str());
  for (const ShownField& row : show(p, PlanView::Table))
    std::printf("  %-12s %s\n", row.label, row.text.c_str());
  std::printf("\nreasons:\n");
  for (const Reason& r : p.reasons) std::printf("  %-12s %s\n", r.field.c_str(), r.text.c_str());
}

const Command plan_command(10, [](CLI::App& app) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Show the plan of this process, or of any node with --topology (a what-if)");
  Args& a = *args;
  a.topology_opt = cmd->add_option("--topology", a.topologies,
                                   "hwloc XML file of a node (what-if); repeat it for several");
  cmd->add_flag("--list", a.list, "list the admin's profiles and caps, and where they come from");
  cmd->add_option("--plugstack", a.plugstack, "the plugstack file whose stoker line --list reads")
      ->capture_default_str();
  cmd->add_option("--svg", a.svg, "also draw each node's plan (every rank) into this SVG file");
  a.cpus_opt =
      cmd->add_option("--cpus", a.cpus, "allowed CPUs, e.g. 0-15,32 (default: all allowed)");
  a.gpus_opt = cmd->add_option("--gpus", a.gpus, "GPU ids visible to the rank, e.g. 0,1,2,3");
  a.rank_opt = cmd->add_option("--local-rank", a.local_rank, "this rank's index on the node");
  a.size_opt = cmd->add_option("--local-size", a.local_size, "ranks on the node");
  a.profile_opt =
      cmd->add_option("--profile", a.profile, "profile name (balanced, cv, nlp, netfs, ...)");
  a.profiles_opt = cmd->add_option("--profiles", a.profiles, "the admin's profiles file");
  a.mem_opt = cmd->add_option("--mem-limit", a.mem_limit, "memory per rank, e.g. 64G, 512MiB");
  a.batch_opt = cmd->add_option("--batch-bytes", a.batch_bytes, "bytes per batch, e.g. 150M");
  for (size_t i = 0; i < kUserFlags.size(); ++i) {
    const UserFlag& f = kUserFlags[i];
    if (!f.tunes) continue;
    const std::string name = f.name;  // --stoker-workers, also --workers
    cmd->add_option("--" + name.substr(std::string_view("stoker-").size()) + ",--" + name,
                    a.flag_values[i], f.usage + std::string(" (") + f.arginfo + ")");
  }
  cmd->add_flag("--json", a.json, "one JSON object instead of the table");
  cmd->add_flag(
      "--ignore-env", a.ignore_env,
      "recompute, ignoring STOKER_* (the plugin's plan, STOKER_PROFILE, STOKER_PROFILES)");
  cmd->callback([args] {
    const Args& a = *args;
    if (a.list)
      return list_profiles(
          find_profiles_file(a.profiles_opt->count() ? std::optional(a.profiles) : std::nullopt,
                             a.plugstack),
          a.json);
    if (wants_whole_nodes(a.topologies.size(), !a.svg.empty(), a.size_opt->count(),
                          a.rank_opt->count()))
      return run_whatif(
          {a.topologies, a.rank_opt->count() ? std::optional(a.local_rank) : std::nullopt,
           a.local_size, a.svg, a.json},
          request_from(a));
    LocalPlan lp = plan_for_this_process(request_from(*args));
    if (args->json)
      std::printf("%s\n", to_json(lp).dump(2).c_str());
    else
      print_human(lp);
  });
});

}  // namespace

}  // namespace stoker::cli
