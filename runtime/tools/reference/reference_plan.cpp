// The page's flags, plan variables and runtime switches (reference.hpp).
#include <chrono>

#include "reference.hpp"
#include "stoker/distributed/agree_wait.hpp"
#include "stoker/distributed/world.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/plan/plan_fields.hpp"
#include "stoker/plan/user_options.hpp"
#include "stoker/record/run_record.hpp"

namespace stoker::reference {

namespace {

// What a flag's parser accepts, in its own words: the refusal of a value no flag takes
// ("expected auto or a whole number from 1 to 1024"), so the bound is written once, in the
// parser.
std::string accepted(const UserFlag& flag) {
  try {
    UserOptions opts;
    set_user_option(opts, flag.name, "\x7f");
  } catch (const Error& e) {
    const std::string what = e.problem();
    return what.rfind("expected ", 0) == 0 ? what.substr(9) : what;
  }
  return "any value";
}

std::string given(const UserFlag& flag) {
  const std::string name = std::string("--") + flag.name;
  if (!flag.arginfo) return name;
  return flag.has_arg == 2 ? name + "[=" + flag.arginfo + "]" : name + "=" + flag.arginfo;
}

std::string seconds(std::chrono::seconds s) {
  return std::to_string(s.count());
}

}  // namespace

void user_flags(std::ostream& out) {
  out << "## User flags\n\n";
  paragraph(out,
            "Given to `sbatch`, `srun` or `salloc`, or as `#SBATCH` lines; the plugin registers "
            "every row of `kUserFlags` (`runtime/src/plan/user_options.cpp`) and checks a value "
            "when the job is submitted: a bad one stops the submission with one line naming the "
            "flag, and nothing is queued. The tuning overrides are also `stoker plan`'s "
            "`--stoker-NAME` and `--NAME`; the admin's `AllowOverride=no` refuses them, and "
            "`MaxPrefetch` caps `--stoker-prefetch`.");
  std::vector<std::vector<std::string>> rows;
  for (const UserFlag& f : kUserFlags) {
    rows.push_back({code(given(f)), f.has_arg == 0 ? "no value" : cell(accepted(f)),
                    f.tunes ? "yes" : "no", cell(f.usage)});
  }
  table(out, {"flag", "accepts", "tuning override", "what it does"}, rows);
}

void plan_variables(std::ostream& out) {
  out << "## The plan's variables\n\n";
  paragraph(out,
            "The plugin exports the plan to every task it tunes, one `STOKER_*` variable per row "
            "of `plan_fields()` (`runtime/src/plan/plan_fields.cpp`); the runtime, the Python "
            "package and any framework read them back, and outside the plugin the runtime "
            "computes the same plan itself. The key is the field's name in `stoker plan --json` "
            "and its `stoker.Plan` attribute. Required: must be set whenever "
            "`STOKER_PLAN_VERSION` is.");
  std::vector<std::vector<std::string>> rows;
  rows.push_back({code("STOKER_PLAN_VERSION"), "", "", "yes", code(std::to_string(Plan::kVersion)),
                  "The plugin's contract version; present: a plan follows. A runtime of another "
                  "version does not read the plan, says so on one stderr line and computes "
                  "its own"});
  for (const PlanField& f : plan_fields()) {
    rows.push_back({code(f.env), code(f.name), f.codec.type, f.required ? "yes" : "no",
                    code(f.example), cell(f.help)});
  }
  table(out, {"variable", "key", "type", "required", "example", "meaning"}, rows);
  paragraph(out, "The plugin also sets, beside the plan:");
  table(out, {"variable", "meaning"},
        {{code(kExportedVar),
          "`NAME=VALUE,...`: which launcher and thread variables (`RANK`, `MASTER_PORT`, "
          "`OMP_NUM_THREADS`, ...) the plugin set; a step started from a tuned batch step "
          "replaces those and keeps any you changed"},
         {code(kPlanSealVar),
          "`@step=JOB.STEP;NAME=VALUE;...`: the plugin's own copy of the `STOKER_*` variables "
          "it exported. A variable changed after the plugin planned (an image's environment, "
          "a wrapper) is not used: the runtime reads the seal's value and names the change on "
          "one stderr line"}});
}

void switches(std::ostream& out) {
  const AgreeWait wait;
  out << "## The runtime's switches\n\n";
  paragraph(out,
            "Variables the runtime reads when they are set (the plugin sets some of them). "
            "A malformed value is an error naming the variable.");
  table(
      out, {"variable", "values", "default", "meaning"},
      {{code(kVerboseVar), "`1`", "unset",
        "set by the plugin for `--stoker-verbose`: one stderr line saying where the training "
        "loop's thread was pinned (and, from Python, torch's intra-op threads), and a summary "
        "line per rank at exit"},
       {code(kProfilesVar), "a profiles file", "the built-ins",
        "the admin's profiles file to plan with; the plugin passes on the one its plugstack "
        "line names, so that workers a launcher such as torchrun starts in a task plan with "
        "it"},
       {code(kMpiVar), "`0`, `1`", "unset",
        "`1`: use MPI for the epoch agreement and the shared listing; `0`: never. Unset: only "
        "when the application initialised MPI, or under Open MPI's `mpirun` when no other "
        "launcher owns the process; never for `srun --mpi=pmix`'s `PMIX_RANK` alone"},
       {code("STOKER_MPI_LIBRARY"), "a library name or path", "`libmpi.so.40`",
        "the MPI library loaded at run time (Open MPI's and HPC-X's ABI; stoker links no "
        "MPI): an image without one, or with a half-copied one, gets one stderr line and no "
        "check instead of a rank that dies in `MPI_Init`"},
       {code("STOKER_SEED"), "0 to 2^64-1", "0", "the sampler's seed when the program gives none"},
       {code("STOKER_AGREE_TIMEOUT"), "seconds, `0`: forever", seconds(wait.timeout),
        "how long a rank waits for the others to agree on an epoch, or for rank 0's listing "
        "of an image folder (the default is NCCL's)"},
       {code("STOKER_AGREE_WARN"), "seconds, 1 or more", seconds(wait.warn),
        "seconds between two lines naming the ranks still missing"},
       {code("STOKER_METRICS"), "a file path; `{job}`, `{rank}` replaced", "unset",
        "the Prometheus text file the loader rewrites for node-exporter's textfile collector "
        "([admin guide](admin-guide.md#metrics))"},
       {code("STOKER_METRICS_INTERVAL"), "seconds above 0, at most 86400", "5",
        "seconds between two writes of that file"},
       {code(kRunRecordDirVar), "a folder", "unset",
        "set by the plugin with `job_log=`: where the loader leaves this rank's run record, "
        "`rank-N.json`, at close, exit or SIGTERM"},
       {code("STOKER_CACHE_DIR"), "a folder, `none`: off",
        "`$XDG_CACHE_HOME/stoker`, else `~/.cache/stoker`",
        "where streamed shards' sample counts and image folders' listings are cached"},
       {code("STOKER_SIMD"), "`auto`, `avx2`, `portable`", "`auto`",
        "the image pipeline's resample code: `auto` takes AVX2 where the CPU has it, "
        "`portable` the code that runs everywhere; both give the same bytes"}});
}

}  // namespace stoker::reference
