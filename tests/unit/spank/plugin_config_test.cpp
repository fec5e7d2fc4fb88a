#include "plugin_config.hpp"

#include <gtest/gtest.h>

#include "stoker/common/error.hpp"

namespace stoker::spank {
namespace {

TEST(PluginConfig, DefaultsWithoutArguments) {
  const PluginConfig c = parse_plugin_args({});
  EXPECT_EQ(c.enable, TunePolicy::OptIn);
  EXPECT_FALSE(c.batch_step);
  EXPECT_EQ(c.profiles, "");
  EXPECT_EQ(c.topology_xml, "");
  EXPECT_EQ(c.topology_cache, "/run/stoker");
}

TEST(PluginConfig, EveryKey) {
  const PluginConfig c =
      parse_plugin_args({"profiles=/etc/slurm/stoker.conf", "default_profile=cv", "enable=always",
                         "topology_xml=/etc/slurm/node.xml", "batch_step=yes",
                         "topology_cache=/var/spool/slurmd/stoker"});
  EXPECT_EQ(c.profiles, "/etc/slurm/stoker.conf");
  EXPECT_EQ(c.default_profile, "cv");
  EXPECT_EQ(c.enable, TunePolicy::Always);
  EXPECT_EQ(c.topology_xml, "/etc/slurm/node.xml");
  EXPECT_TRUE(c.batch_step);
  EXPECT_EQ(c.topology_cache, "/var/spool/slurmd/stoker");
  EXPECT_EQ(parse_plugin_args({"enable=never"}).enable, TunePolicy::Never);
  EXPECT_EQ(parse_plugin_args({"enable=opt-in", "batch_step=no"}).enable, TunePolicy::OptIn);
}

TEST(PluginConfig, RunRecordKeys) {
  const PluginConfig off = parse_plugin_args({});
  EXPECT_EQ(off.job_log, "");  // off unless the admin names a log
  EXPECT_EQ(off.record_root, "/run/stoker/records");
  EXPECT_FALSE(off.admin_comment);
  const PluginConfig c = parse_plugin_args(
      {"job_log=/var/log/stoker/jobs.jsonl", "record_root=/var/spool/stoker", "admin_comment=yes"});
  EXPECT_EQ(c.job_log, "/var/log/stoker/jobs.jsonl");
  EXPECT_EQ(c.record_root, "/var/spool/stoker");
  EXPECT_TRUE(c.admin_comment);
}

TEST(PluginConfig, UnknownKeyNamesItAndTheKnownKeys) {
  try {
    parse_plugin_args({"enable=always", "colour=blue"});
    FAIL() << "accepted an unknown key";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "plugstack argument 'colour=blue': unknown key 'colour' (keys: profiles, "
              "default_profile, enable, topology_xml, topology_cache, batch_step, job_log, "
              "record_root, admin_comment) (fix the line in plugstack.conf)");
  }
}

TEST(PluginConfig, BadValuesAreErrors) {
  for (const char* arg :
       {"enable=sometimes", "batch_step=maybe", "profiles=", "novalue",
        "topology_xml=", "default_profile=", "topology_cache=", "topology_cache=relative/dir",
        "job_log=", "job_log=jobs.jsonl", "record_root=relative", "admin_comment=maybe"}) {
    EXPECT_THROW(parse_plugin_args({arg}), Error) << arg;
  }
  try {
    parse_plugin_args({"enable=sometimes"});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("allowed: always, opt-in, never"), std::string::npos);
  }
}

}  // namespace
}  // namespace stoker::spank
