// The Plan's fields (plan_fields.hpp): one codec per type of value, and one row per field.
#include "stoker/plan/plan_fields.hpp"

#include <algorithm>
#include <type_traits>

#include "stoker/common/strings.hpp"
#include "stoker/common/values.hpp"
#include "stoker/plan/limits.hpp"

namespace stoker {

namespace {

template <class T>
using Member = T Plan::*;

std::string or_dash(const std::string& s) {
  return s.empty() ? "-" : s;
}

// The variable's value; the caller (read_plan) has seen that it is set.
std::string value_of(const EnvGetter& env, const std::string& name) {
  return env(name).value_or("");
}

// A name checked by values::valid_name (the profile).
FieldCodec name(Member<std::string> m, const char* allowed) {
  return {"name", [m](const Plan& p) { return p.*m; },
          [m, allowed](Plan& p, const EnvGetter& env, const std::string& var) {
            p.*m = value_of(env, var);
            if (!values::valid_name(p.*m)) throw_garbled_env(var, p.*m, allowed);
          },
          [m](const Plan& p) { return FieldValue(p.*m); }, [m](const Plan& p) { return p.*m; }};
}

// Any text, "" for none (the GPU's PCI bus id).
FieldCodec text(Member<std::string> m) {
  return {"text", [m](const Plan& p) { return p.*m; },
          [m](Plan& p, const EnvGetter& env, const std::string& var) { p.*m = value_of(env, var); },
          [m](const Plan& p) { return FieldValue(p.*m); },
          [m](const Plan& p) { return or_dash(p.*m); }};
}

// A whole number from lo (or from the field `floor`, read before it) to hi.
template <class T>
FieldCodec whole(const char* type, Member<T> m, uint64_t lo, uint64_t hi, Member<int> floor,
                 PlanText human) {
  using Number = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  return {type, [m](const Plan& p) { return std::to_string(p.*m); },
          [m, lo, hi, floor](Plan& p, const EnvGetter& env, const std::string& var) {
            const uint64_t from = floor ? static_cast<uint64_t>(p.*floor) : lo;
            p.*m = static_cast<T>(env_whole(env, var, from, hi).value_or(from));
          },
          [m](const Plan& p) { return FieldValue(static_cast<Number>(p.*m)); }, std::move(human)};
}

template <class T>
FieldCodec count(Member<T> m, uint64_t lo, uint64_t hi, Member<int> floor = nullptr) {
  return whole("count", m, lo, hi, floor, [m](const Plan& p) { return std::to_string(p.*m); });
}

FieldCodec bytes(Member<uint64_t> m) {
  return whole("bytes", m, 0, UINT64_MAX, nullptr,
               [m](const Plan& p) { return values::format_bytes(p.*m); });
}

// An OS CPU list ("0-5,12").
FieldCodec cpus(Member<CpuSet> m) {
  return {
      "cpus", [m](const Plan& p) { return (p.*m).to_string(); },
      [m](Plan& p, const EnvGetter& env, const std::string& var) { p.*m = *env_cpus(env, var); },
      [m](const Plan& p) { return FieldValue((p.*m).to_string()); },
      [m](const Plan& p) { return or_dash((p.*m).to_string()); }};
}

// Whole numbers from 0 to hi, separated by commas; "" for none.
FieldCodec numbers(Member<std::vector<int>> m, uint64_t hi, const char* allowed) {
  return {"numbers", [m](const Plan& p) { return join_numbers(p.*m); },
          [m, hi, allowed](Plan& p, const EnvGetter& env, const std::string& var) {
            const std::string v = value_of(env, var);
            if (v.empty()) return;
            for (std::string_view item : split(v, ',')) {
              auto n = values::parse_whole(item, 0, hi);
              if (!n) throw_garbled_env(var, v, allowed);
              (p.*m).push_back(static_cast<int>(*n));
            }
          },
          [m](const Plan& p) { return FieldValue(p.*m); },
          [m](const Plan& p) { return or_dash(join_numbers(p.*m)); }};
}

// Names separated by commas, none empty; "" for none.
FieldCodec names(Member<std::vector<std::string>> m, const char* allowed) {
  return {"names", [m](const Plan& p) { return join(p.*m); },
          [m, allowed](Plan& p, const EnvGetter& env, const std::string& var) {
            const std::string v = value_of(env, var);
            if (v.empty()) return;
            for (std::string_view item : split(v, ',')) {
              if (item.empty()) throw_garbled_env(var, v, allowed);
              (p.*m).emplace_back(item);
            }
          },
          [m](const Plan& p) { return FieldValue(p.*m); },
          [m](const Plan& p) { return or_dash(join(p.*m)); }};
}

// 0 or 1 (people read yes or no).
FieldCodec flag(Member<bool> m) {
  return {"flag", [m](const Plan& p) { return std::string(p.*m ? "1" : "0"); },
          [m](Plan& p, const EnvGetter& env, const std::string& var) {
            const std::string v = value_of(env, var);
            if (v != "0" && v != "1") throw_garbled_env(var, v, "0 or 1");
            p.*m = v == "1";
          },
          [m](const Plan& p) { return FieldValue(p.*m); },
          [m](const Plan& p) { return std::string(p.*m ? "yes" : "no"); }};
}

// One of an enum's names, read and written through the enum's one name table.
template <class E, size_t N>
FieldCodec mode(Member<E> m, const EnumName<E> (&names)[N]) {
  return {"mode", [m](const Plan& p) { return std::string(to_string(p.*m)); },
          [m, &names](Plan& p, const EnvGetter& env, const std::string& var) {
            const std::string v = value_of(env, var);
            const std::optional<E> e = value_named(names, v);
            if (!e) throw_garbled_env(var, v, names_of(names));
            p.*m = *e;
          },
          [m](const Plan& p) { return FieldValue(std::string(to_string(p.*m))); },
          [m](const Plan& p) { return std::string(to_string(p.*m)); }};
}

// The rows of `stoker plan`'s table that also say other fields.
std::string cpus_row(const Plan& p) {
  return or_dash(p.cpus.to_string()) + " (" + std::to_string(p.cpus.count()) + " CPUs)";
}
std::string prefetch_row(const Plan& p) {
  return std::to_string(p.prefetch) + " batches of " + values::format_bytes(p.batch_bytes) +
         ", up to " + std::to_string(p.prefetch_max) +
         (p.prefetch_max == p.prefetch ? " (fixed)" : " (the controller's room)");
}
std::string stream_row(const Plan& p) {
  return p.stream ? "yes, shuffle buffer " + std::to_string(p.shuffle_buffer) : "no";
}
std::string bind_row(const Plan& p) {
  return std::string(to_string(p.bind)) + ", mem-bind " + to_string(p.mem_bind);
}

constexpr uint64_t kMaxNumaNode = 1 << 16;
constexpr Form kEnv = Form::Env;

// `stoker plan` shows profile and local rank and size in its heading, the verbose line the
// local rank and size in its own; prefetch_max, batch_bytes, shuffle_buffer and mem_bind
// are in the table's rows of prefetch, stream and bind. One paragraph per field:
// clang-format off
std::vector<PlanField> rows() {
  using namespace limits;
  return {
      {.name = "profile", .env = "STOKER_PROFILE", .required = true, .example = "cv",
       .help = "The profile the plan was made with; outside the plugin, the profile to plan with",
       .codec = name(&Plan::profile, "a profile name (letters, digits, '-', '_')"),
       .line = {"profile", 10}},
      {.name = "workers", .env = "STOKER_WORKERS", .required = true, .example = "3",
       .help = "Loader worker threads of the rank",
       .codec = count(&Plan::workers, 1, kMaxWorkers),
       .table = {"workers", 50}, .line = {"workers", 40}, .whatif = {"workers", 60}},
      {.name = "prefetch", .env = "STOKER_PREFETCH", .required = true, .example = "5",
       .help = "The ring's starting depth: batches in flight for the whole rank, not per worker",
       .codec = count(&Plan::prefetch, 1, kMaxPrefetch),
       .table = {"prefetch", 60, prefetch_row}, .line = {"prefetch", 60},
       .whatif = {"prefetch", 70}},
      {.name = "prefetch_max", .env = "STOKER_PREFETCH_MAX", .required = true, .example = "9",
       .help = "The most batches the loader's controller may grow the ring to (= STOKER_PREFETCH "
               "when --stoker-prefetch=N fixed it)",
       .codec = count(&Plan::prefetch_max, 0, kMaxPrefetch, &Plan::prefetch),
       .line = {"prefetch_max", 70}, .whatif = {"up to", 80}},
      {.name = "cpus", .env = "STOKER_CPUS", .required = true, .example = "0",
       .help = "The rank's CPUs, an OS CPU list such as 0-5,12 (online CPUs of this machine)",
       .codec = cpus(&Plan::cpus),
       .table = {"cpus", 10, cpus_row}, .line = {"cpus", 20, kEnv}, .whatif = {"cpus", 20}},
      {.name = "main_cpus", .env = "STOKER_MAIN_CPUS", .required = true, .example = "0",
       .help = "The training loop's CPUs; torch's and BLAS's thread counts follow them",
       .codec = cpus(&Plan::main_cpus), .table = {"main cpus", 20}, .line = {"main", 30, kEnv}},
      {.name = "worker_cpus", .env = "STOKER_WORKER_CPUS", .required = true, .example = "0",
       .help = "The loader workers' CPUs",
       .codec = cpus(&Plan::worker_cpus),
       .table = {"worker cpus", 30}, .line = {"worker_cpus", 50, kEnv}},
      {.name = "numa", .env = "STOKER_NUMA", .required = false, .example = "0",
       .help = "The NUMA nodes of the rank's memory, such as 0,1",
       .codec = numbers(&Plan::numa, kMaxNumaNode, "NUMA node numbers such as 0,1"),
       .table = {"numa", 40}, .whatif = {"numa", 30}},
      {.name = "gpu", .env = "STOKER_GPU", .required = false, .example = "0000:47:00.0",
       .help = "The PCI bus id of the rank's GPU; empty for none",
       .codec = text(&Plan::gpu),
       .table = {"gpu", 100}, .line = {"gpu", 100}, .whatif = {"gpu", 40}},
      {.name = "pin_memory", .env = "STOKER_PIN_MEMORY", .required = true, .example = "1",
       .help = "1: page-locked host memory for batches",
       .codec = flag(&Plan::pin_memory), .table = {"pin memory", 80}, .line = {"pin_memory", 90}},
      {.name = "stream", .env = "STOKER_STREAM", .required = false, .example = "1",
       .help = "1: tar shards are streamed (the profile's Stream)",
       .codec = flag(&Plan::stream), .table = {"stream", 90, stream_row}},
      {.name = "shuffle_buffer", .env = "STOKER_SHUFFLE_BUFFER", .required = false,
       .example = "512",
       .help = "Samples a streaming rank holds to shuffle (the profile's ShuffleBuffer)",
       .codec = count(&Plan::shuffle_buffer, 1, kMaxShuffleBuffer)},
      {.name = "mem_budget", .env = "STOKER_MEM_BUDGET", .required = true, .example = "123456789",
       .help = "Bytes the prefetched batches may use: above 0, and at least the consumer's held "
               "batches plus one",
       .codec = bytes(&Plan::mem_budget),
       .table = {"mem budget", 70}, .line = {"mem_budget", 80, kEnv}, .whatif = {"budget", 90}},
      {.name = "batch_bytes", .env = "STOKER_BATCH_BYTES", .required = false, .example = "4096",
       .help = "The batch size the budget assumed, in bytes",
       .codec = bytes(&Plan::batch_bytes)},
      {.name = "nics", .env = "STOKER_NICS", .required = false, .example = "mlx5_1,eth0",
       .help = "NICs nearest the rank's GPU, InfiniBand first, such as mlx5_0,eth0; empty without "
               "a GPU",
       .codec = names(&Plan::nics, "NIC names separated by commas"),
       .table = {"nics", 110}, .whatif = {"nics", 50}},
      {.name = "bind", .env = "STOKER_BIND", .required = false, .example = "even",
       .help = "How the rank's CPUs were chosen and bound: gpu-numa, even or none",
       .codec = mode(&Plan::bind, kBindModeNames),
       .table = {"bind", 120, bind_row}, .line = {"bind", 110}},
      {.name = "mem_bind", .env = "STOKER_MEM_BIND", .required = false, .example = "strict",
       .help = "How the rank's memory is bound: local, strict or none",
       .codec = mode(&Plan::mem_bind, kMemBindNames),
       .line = {"mem_bind", 120}},
      {.name = "local_rank", .env = "STOKER_LOCAL_RANK", .required = false, .example = "1",
       .help = "The rank's place on its node",
       .codec = count(&Plan::local_rank, 0, kMaxLocalRanks), .whatif = {"rank", 10}},
      {.name = "local_size", .env = "STOKER_LOCAL_SIZE", .required = false, .example = "2",
       .help = "How many ranks share the node",
       .codec = count(&Plan::local_size, 1, kMaxLocalRanks)},
  };
}
// clang-format on

const Shown& in(const PlanField& f, PlanView view) {
  switch (view) {
    case PlanView::Table:
      return f.table;
    case PlanView::Line:
      return f.line;
    case PlanView::WhatIf:
      break;
  }
  return f.whatif;
}

}  // namespace

const std::vector<PlanField>& plan_fields() {
  static const std::vector<PlanField> fields = rows();
  return fields;
}

std::vector<ShownField> show(const Plan& p, PlanView view) {
  std::vector<const PlanField*> fields;
  for (const PlanField& f : plan_fields())
    if (in(f, view).label) fields.push_back(&f);
  std::stable_sort(fields.begin(), fields.end(), [view](const PlanField* a, const PlanField* b) {
    return in(*a, view).place < in(*b, view).place;
  });
  std::vector<ShownField> out;
  for (const PlanField* f : fields) {
    const Shown& s = in(*f, view);
    out.push_back({*f, s.label,
                   s.text                ? s.text(p)
                   : s.form == Form::Env ? f->codec.write(p)
                                         : f->codec.human(p)});
  }
  return out;
}

}  // namespace stoker
