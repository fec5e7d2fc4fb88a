// The run record and the job log line as JSON: what the runtime writes reads back the same,
// and what a user could put in a record (it is read as root) is refused with one line.
#include <gtest/gtest.h>

#include <string>

#include "stoker/common/error.hpp"
#include "run_record_sample.hpp"
#include "stoker/plan/run_record.hpp"

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
  l.record->cpus.assign(256, '1');
  l.record->profile.assign(256, 'p');
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
  auto with = [](const std::string& key, const std::string& value) {
    std::string text = to_json(sample_run_record());
    const std::string k = "\"" + key + "\":";
    const size_t at = text.find(k) + k.size();
    const size_t end = text.find_first_of(",}", at);
    return text.substr(0, at) + value + text.substr(end);
  };
  EXPECT_NE(error_of(with("rank", "-1")).find("\"rank\" is not a whole number"),
            std::string::npos);
  EXPECT_NE(error_of(with("wait_share", "7")).find("\"wait_share\" is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(with("job", "\"" + std::string(300, 'j') + "\"")).find("longer than 256"),
            std::string::npos);
  EXPECT_NE(error_of(with("job", "{\"a\":[[[[1]]]]}")).find("nests deeper"), std::string::npos);
  EXPECT_NE(error_of(with("v", "2")).find("version"), std::string::npos);
  std::string extra = to_json(sample_run_record());
  extra.insert(1, "\"cmd\":\"rm -rf /\",");
  EXPECT_NE(error_of(extra).find("unknown key \"cmd\""), std::string::npos);
  std::string twice = to_json(sample_run_record());
  twice.insert(1, "\"job\":\"9\",");
  EXPECT_NE(error_of(twice).find("has \"job\" twice"), std::string::npos) << error_of(twice);
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_NE(error_of(deep).find("nests deeper"), std::string::npos);
}
