// The run records of a step on this node (record/run_record.hpp): the folder the plugin makes
// for them, their collection into the admin's job log after the tasks end, and the clean-up.
// Slurm-free, so unit tests link it; stepd.cpp calls it.
//
// It runs as root and reads files the job's user wrote, in a folder that user owns:
//  - the root folder (plugstack record_root) must be owned by root and writable by no one
//    else, so no user can put, move or replace a step's folder there;
//  - a record is opened without following links or blocking (a FIFO), and read only when
//    it is a regular file of the job's user with one link and at most kMaxRecordBytes;
//  - what it holds is parsed strictly (parse_run_record) and must name this job, step, rank;
//  - the step's folder is always a fresh one: an earlier step's of the same name (a job id
//    used again, a requeued job) is removed first, never handed to the next user; and at the
//    step's end everything in it goes (a writer's temporaries, whatever the user put there),
//    removed by name from folders opened O_NOFOLLOW, so no link is followed.
// The lines go to the admin's job log through job_log.hpp. Nothing here throws past its
// caller: a bad, missing or unreadable record is a log line saying so.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "stoker/record/run_record.hpp"

namespace stoker::spank {

// The step's folder name in the root on the step's node `node_id` (S_JOB_NODEID):
// "<job>.<step>.<node_id>". The node's id keeps the nodes of a step apart when the root is
// shared (a network file system, nodes emulated on one host).
std::string step_folder_name(uint32_t job, uint32_t step, uint32_t node_id);

// Makes `root` when missing (0755) and the step's folder in it, fresh (0700, owned by uid:gid;
// one of the same name is removed first); returns its path. Throws stoker::Error naming the
// folder when the root is not a folder owned by this process's user and closed to others, or
// when the folder cannot be made fresh.
std::string make_step_folder(const std::string& root, const std::string& name, uid_t uid,
                             gid_t gid);

// Who the lines are about: the collector's view, never the record's.
struct StepIdentity {
  std::string time, job, step, node, user, partition;
  uid_t uid = 0;  // the job's user: a record must be theirs
  // The step ran in a container: pyxis's --container-image and --container-mounts as the
  // stepd reads them (spank_option_getopt in task_exit); both "" otherwise.
  std::string container_image{}, container_mounts{};  // {}: older initializers stay whole
};

// Whether pyxis's --container-mounts value ("SRC[:DST[:FLAGS]],...") makes `folder` reachable
// in the container at the same path: a mount of it or of a folder above it, at its own path.
bool mounts_reach(const std::string& container_mounts, const std::string& folder);

// The problem of a missing record in `folder`: what most likely kept the rank from writing it.
// In a container whose --container-mounts do not reach the folder, the folder itself (a fresh
// /run, or a path the image lacks); otherwise a rank that made no stoker loader.
std::string missing_record_problem(const std::string& folder, const StepIdentity& who);

// One line per rank of `ranks`, in that order: "ok" with the record, else "missing" or
// "bad" with one line naming the file and what is wrong.
std::vector<JobLogLine> collect_records(const std::string& root, const std::string& name,
                                        const std::vector<uint64_t>& ranks,
                                        const StepIdentity& who);

// Removes the step's folder and everything in it, never through a link; "" or what was left.
std::string remove_step_folder(const std::string& root, const std::string& name);

// The time now, UTC, ISO 8601 ("2026-12-02T16:03:40Z").
std::string utc_now();

}  // namespace stoker::spank
