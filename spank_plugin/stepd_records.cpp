#include "stepd_records.hpp"

#include <pwd.h>
#include <slurm/slurm.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <vector>

#include "job_log.hpp"
#include "record_collect.hpp"
#include "stoker/common/launch_env.hpp"
#include "stoker/common/node_name.hpp"
#include "stoker/plan/tune_decision.hpp"
#include "stoker/record/run_advice.hpp"

namespace stoker::spank {

namespace {

// What init_post_opt found, for task_init (forked from this process) and exit.
struct StepRecords {
  std::string name;  // the step's folder in record_root; "" = no records for this step
  std::string folder;
  uid_t uid = 0;
  std::string job, step, user, partition;
  uint32_t tasks_ended = 0;                       // this node's tasks Slurm has reaped (task_exit)
  std::string container_image, container_mounts;  // pyxis's options, read in task_exit
};

StepRecords& records() {
  static StepRecords r;
  return r;
}

std::string user_name(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found) return pw.pw_name;
  return std::to_string(uid);
}

// This node's name: slurmstepd sets SLURMD_NODENAME in its own environment from slurmd's
// configuration when it starts. The step's environment is srun's: in exit, for a node whose
// tasks never started, its SLURMD_NODENAME is the node srun ran on (slurmstepd sets this node's
// there only as each task is reaped).
std::string this_node() {
  return stoker::node_name(process_env());
}

// The step's global ranks on this node.
std::vector<uint64_t> node_ranks(spank_t sp) {
  uint32_t local = 0;
  std::vector<uint64_t> ranks;
  if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS) return ranks;
  for (uint32_t i = 0; i < local; ++i) {
    uint32_t global = 0;
    if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &global) == ESPANK_SUCCESS)
      ranks.push_back(global);
  }
  return ranks;
}

// Names the job to update: by number where job_desc_msg_t has one; Slurm 26.05 dropped
// job_id and takes the job only as text (job_id_str, which every release reads).
template <typename Desc>
void name_job(Desc& desc, uint32_t job, std::string& text) {
  if constexpr (requires { desc.job_id; }) {
    desc.job_id = job;
  } else {
    text = std::to_string(job);
    desc.job_id_str = text.data();
  }
}

// The job's AdminComment := `text` (one RPC to slurmctld, as root). "" or what failed.
std::string set_admin_comment(uint32_t job, const std::string& text) {
  job_desc_msg_t desc;
  slurm_init_job_desc_msg(&desc);
  std::string job_text;
  name_job(desc, job, job_text);
  std::string comment = text.substr(0, 1000);
  desc.admin_comment = comment.data();
  if (slurm_update_job(&desc) == SLURM_SUCCESS) return "";
  // errno, which slurm_get_errno() returned until Slurm 24.05 removed it.
  return slurm_strerror(errno);
}

void verdict_to_admin_comment(spank_t sp, const std::vector<JobLogLine>& lines) {
  uint32_t node = 1, job = 0;
  if (spank_get_item(sp, S_JOB_NODEID, &node) != ESPANK_SUCCESS || node != 0) return;
  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) return;
  const RunRecord* worst = nullptr;
  for (const JobLogLine& l : lines) {
    if (l.record && (!worst || l.record->wait_share > worst->wait_share)) worst = &*l.record;
  }
  if (!worst) return;
  if (const std::string problem = set_admin_comment(job, verdict_line(*worst)); !problem.empty())
    slurm_info("stoker: job %u: cannot set the AdminComment: %s", job, problem.c_str());
}

// Another plugin's option of the step, by its name: Slurm 22.05's spank_option_getopt finds
// a remote option by name whatever plugin registered it, and answers in task_exit (not in
// init_post_opt or exit: ESPANK_NOT_AVAIL there). pyxis takes --container-image and
// --container-mounts from srun; "" when unset or not loaded.
std::string step_option(spank_t sp, const char* name) {
  spank_option opt{};
  opt.name = const_cast<char*>(name);
  opt.has_arg = 1;
  char* value = nullptr;
  if (spank_option_getopt(sp, &opt, &value) != ESPANK_SUCCESS || !value) return "";
  return value;
}

}  // namespace

std::optional<std::string> spank_env(spank_t sp, const std::string& name) {
  std::vector<char> buf(4096);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const spank_err_t rc = spank_getenv(sp, name.c_str(), buf.data(), static_cast<int>(buf.size()));
    if (rc == ESPANK_SUCCESS) return std::string(buf.data());
    if (rc != ESPANK_NOSPACE) return std::nullopt;
    buf.resize(buf.size() * 4);
  }
  return std::nullopt;
}

void records_init(spank_t sp, const PluginConfig& cfg) {
  StepRecords& r = records();
  r = {};
  if (cfg.job_log.empty()) return;
  uint32_t job = 0, step = 0, node = 0;
  gid_t gid = 0;
  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_NODEID, &node) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_UID, &r.uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
    return;
  if (step_kind(step) == StepKind::Extern) return;  // runs no user code
  try {
    const std::string name = step_folder_name(job, step, node);
    r.folder = make_step_folder(cfg.record_root, name, r.uid, gid);
    r.name = name;
  } catch (const std::exception& e) {
    slurm_error("stoker: run records of job %u step %u are off: %s", job, step, e.what());
    return;
  }
  r.job = std::to_string(job);
  r.step = std::to_string(step);
  r.user = user_name(r.uid);
  r.partition = spank_env(sp, "SLURM_JOB_PARTITION").value_or("");
}

void records_export(spank_t sp) {
  const StepRecords& r = records();
  if (!r.name.empty()) spank_setenv(sp, kRunRecordDirVar, r.folder.c_str(), 1);
}

void records_task_ended(spank_t sp, const PluginConfig& cfg, bool tuned) {
  StepRecords& r = records();
  if (r.name.empty()) return;
  uint32_t local = 0;
  if (spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &local) != ESPANK_SUCCESS) return;
  if (r.tasks_ended == 0) {  // whether the tasks ran in a container (pyxis), for the lines
    r.container_image = step_option(sp, "container-image");
    if (!r.container_image.empty()) r.container_mounts = step_option(sp, "container-mounts");
  }
  if (++r.tasks_ended >= local) records_collect(sp, cfg, tuned);
}

void records_collect(spank_t sp, const PluginConfig& cfg, bool tuned) {
  StepRecords& r = records();
  if (r.name.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<uint64_t> ranks = node_ranks(sp);
  StepIdentity who{utc_now(), r.job, r.step, this_node(), r.user, r.partition, r.uid};
  who.container_image = r.container_image;
  who.container_mounts = r.container_mounts;
  std::vector<JobLogLine> lines = collect_records(cfg.record_root, r.name, ranks, who);
  // A step stoker did not tune need not use its loader: no line for a record it did not leave.
  if (!tuned) std::erase_if(lines, [](const JobLogLine& l) { return l.status == "missing"; });
  std::vector<std::string> text;
  for (const JobLogLine& l : lines) text.push_back(to_json(l));
  const std::string log = job_log_file(cfg.job_log, who.node);
  JobLogOptions options;
  options.make_folder = cfg.job_log.back() == '/';
  options.lock_folder = cfg.record_root;  // local, root's (make_step_folder checked it)
  const std::string problem = append_to_log(log, text, options);
  const std::string left = remove_step_folder(cfg.record_root, r.name);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!problem.empty())
    slurm_error("stoker: job %s step %s: %s", r.job.c_str(), r.step.c_str(), problem.c_str());
  if (!left.empty()) slurm_info("stoker: %s", left.c_str());
  slurm_info("stoker: job %s step %s: %zu run record line(s) for %s in %.3f ms", r.job.c_str(),
             r.step.c_str(), lines.size(), log.c_str(), ms);
  if (cfg.admin_comment) verdict_to_admin_comment(sp, lines);
  r = {};
}

}  // namespace stoker::spank
