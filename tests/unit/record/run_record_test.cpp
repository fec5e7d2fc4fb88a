// The run record and the job log line as JSON: what the runtime writes reads back the same,
// and what a user could put in a record (it is read as root) is refused with one line.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "run_record_sample.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/plan_env.hpp"
#include "stoker/record/run_record.hpp"

using namespace stoker;

namespace {

using test::sample_run_record;

std::string error_of(const std::string& text) {
  try {
    parse_run_record(text, "/run/stoker/records/7.0/rank-0.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The sample record's JSON with the value of its first `key` replaced by `value`.
std::string with(const std::string& key, const std::string& value) {
  std::string text = to_json(sample_run_record());
  const std::string k = "\"" + key + "\":";
  const size_t at = text.find(k) + k.size();
  const size_t end = text.find_first_of(",}", at);
  return text.substr(0, at) + value + text.substr(end);
}

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(STOKER_SOURCE_DIR) + "/tests/support/data/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(RunRecord, ReadsBackWhatIsWritten) {
  const RunRecord r = sample_run_record();
  EXPECT_EQ(parse_run_record(to_json(r), "x"), r);
  RunRecord with_warnings = r;
  with_warnings.decode_warnings = 5;
  EXPECT_EQ(parse_run_record(to_json(with_warnings), "x"), with_warnings);
}

TEST(RunRecord, AJobLogLineCarriesTheRecordUnder4KiB) {
  JobLogLine l{"2026-12-02T16:03:40Z", "4242", "0", "n1", "alice", "gpu", 3, "ok", "",
               sample_run_record()};
  l.record->timeline.assign(kMaxTimelinePoints, {123.456789, 0.123456789, 4096});
  const std::string text = to_json(l);
  EXPECT_LT(text.size(), 4096u);
  const JobLogLine back = parse_job_log_line(text, "log:1");
  EXPECT_EQ(back.user, "alice");
  EXPECT_EQ(back.record->wait_share, 0.41);
}

TEST(RunRecord, AJobLogLineTooLongForItsTimelineDropsTheTimelineOnly) {
  JobLogLine l{"t", "1", "0", "n1", "u", "p", 0, "ok", "", sample_run_record()};
  l.record->prefetch_max_reason.assign(256, 'x');
  l.record->plan.gpu.assign(256, 'g');
  l.record->plan.profile.assign(64, 'p');
  l.record->node.assign(256, 'n');
  l.record->timeline.assign(kMaxTimelinePoints, {1e8 + 0.123456789, 0.123456789, 999999});
  const std::string text = to_json(l);
  EXPECT_LE(text.size(), kMaxLogLine);
  EXPECT_TRUE(parse_job_log_line(text, "log:1").record->timeline.empty());
}

TEST(FaultsRunRecord, EmptyTruncatedAndGarbledRecordsAreOneLineNamingTheFile) {
  const std::string full = to_json(sample_run_record());
  for (const std::string& text : {std::string(), full.substr(0, full.size() / 2),
                                  std::string("\x01\x02 not json"), std::string("[1,2,3]")}) {
    const std::string e = error_of(text);
    EXPECT_NE(e.find("/run/stoker/records/7.0/rank-0.json"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(FaultsRunRecord, AHugeRecordIsRefusedBeforeParsing) {
  const std::string huge(kMaxRecordBytes + 1, ' ');
  EXPECT_NE(error_of(huge).find("larger than 16384 bytes"), std::string::npos);
}

TEST(FaultsRunRecord, HostileRecordsAreRefused) {
  EXPECT_NE(error_of(with("rank", "-1")).find("\"rank\" is not a whole number"), std::string::npos);
  EXPECT_NE(error_of(with("wait_share", "7")).find("\"wait_share\" is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(with("job", "\"" + std::string(300, 'j') + "\"")).find("longer than 256"),
            std::string::npos);
  EXPECT_NE(error_of(with("job", "{\"a\":[[[[1]]]]}")).find("nests deeper"), std::string::npos);
  EXPECT_NE(error_of(with("v", "3")).find("version"), std::string::npos);
  std::string extra = to_json(sample_run_record());
  extra.insert(1, "\"cmd\":\"rm -rf /\",");
  EXPECT_NE(error_of(extra).find("unknown key \"cmd\""), std::string::npos);
  std::string twice = to_json(sample_run_record());
  twice.insert(1, "\"job\":\"9\",");
  EXPECT_NE(error_of(twice).find("has \"job\" twice"), std::string::npos) << error_of(twice);
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_NE(error_of(deep).find("nests deeper"), std::string::npos);
}

TEST(RunRecord, ThePlanIsItsStokerVariables) {
  const RunRecord r = sample_run_record();
  const std::string text = to_json(r);
  for (const auto& [name, value] : plan_to_env(r.plan))
    EXPECT_NE(text.find("\"" + name + "\":\"" + value + "\""), std::string::npos) << name;
  EXPECT_EQ(text.find("\"pin\""), std::string::npos) << "v1's name for pin_memory";
  EXPECT_NE(text.find("\"v\":2"), std::string::npos);
}

// A v1 record as the landed runtime wrote it (tests/support/data/README.md): its twelve plan
// fields land in the plan, "pin" as pin_memory, the loader's workers, prefetch_max and
// mem_budget as the plan's.
TEST(RunRecord, AVersion1RecordOfTheLandedRuntimeStillReads) {
  const RunRecord r = parse_run_record(fixture("record-v1.json"), "record-v1.json");
  EXPECT_EQ(r.job, "4242");
  EXPECT_EQ(r.plan.profile, "balanced");
  EXPECT_EQ(r.plan.cpus.to_string(), "0-1");
  EXPECT_EQ(r.plan.main_cpus.to_string(), "0");
  EXPECT_EQ(r.plan.worker_cpus.to_string(), "1");
  EXPECT_EQ(r.plan.numa, std::vector<int>{0});
  EXPECT_FALSE(r.plan.pin_memory);
  EXPECT_EQ(r.plan.prefetch, 2);
  EXPECT_EQ(r.plan.prefetch_max, 8);
  EXPECT_EQ(r.plan.workers, 2);
  EXPECT_EQ(r.plan.mem_budget, 6319041536u);
  EXPECT_EQ(r.cores(), 2);
  EXPECT_EQ(r.samples, 3124u);
  EXPECT_EQ(r.timeline.size(), 45u);
  // Written again it is a v2 record that reads back the same.
  EXPECT_EQ(parse_run_record(to_json(r), "again"), r);
}

TEST(FaultsRunRecord, AGarbledOrUnknownPlanVariableIsRefused) {
  EXPECT_NE(error_of(with("STOKER_WORKERS", "\"0\"")).find("STOKER_WORKERS"), std::string::npos);
  EXPECT_NE(error_of(with("STOKER_WORKERS", "4")).find("is not a string"), std::string::npos);
  std::string unknown = to_json(sample_run_record());
  unknown.insert(unknown.find("\"plan\":{") + 8, "\"LD_PRELOAD\":\"x\",");
  EXPECT_NE(error_of(unknown).find("unknown key \"LD_PRELOAD\""), std::string::npos)
      << error_of(unknown);
  std::string v1 = fixture("record-v1.json");
  v1.replace(v1.find("\"cpus\":\"0-1\""), 12, "\"cpus\":\"0-x\"");
  EXPECT_NE(error_of(v1).find("garbled \"cpus\""), std::string::npos) << error_of(v1);
}
