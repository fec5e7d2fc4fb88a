// `stoker plan --list` end to end: the admin's profiles, where they came from, which
// built-ins the file overrides; the text parses back to the same set; --json says the same.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "run_command.hpp"
#include "stoker/plan/profiles.hpp"
#include "temp_tree.hpp"

namespace stoker {
namespace {

using nlohmann::json;

class PlanList : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(test::stoker_cli()))
      GTEST_SKIP() << test::stoker_cli() << " is not built (build the `stoker` target)";
    unsetenv("STOKER_PROFILES");
    tree.write("site.conf",
               "# site profiles\n"
               "Defaults DefaultProfile=video MaxPrefetch=32\n"
               "Profile=cv WorkerFraction=0.8 BatchBytes=192M\n"
               "Profile=video Description=\"video clips\" MainCores=2\n");
  }
  // Runs `stoker plan --list ARGS`, stderr too.
  test::CommandResult list(const std::string& args) {
    return test::run_command(test::stoker_cli() + " plan --list " + args + " 2>&1");
  }
  std::string no_plugstack() { return "--plugstack " + tree.path("absent.conf"); }
  test::TempTree tree;
};

TEST_F(PlanList, BuiltinsWhenNoFileIsNamed) {
  const auto r = list(no_plugstack() + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_TRUE(j["file"].is_null());
  EXPECT_NE(j["chosen_by"].get<std::string>().find("absent.conf"), std::string::npos);
  EXPECT_TRUE(j["caps"]["line"].is_null());
  EXPECT_EQ(j["caps"]["knobs"]["MaxPrefetch"], 256);
  EXPECT_EQ(j["overridden_builtins"], json::array());
  std::vector<std::string> names;
  for (const json& p : j["profiles"]) {
    names.push_back(p["name"]);
    EXPECT_EQ(p["origin"], "built-in");
  }
  EXPECT_EQ(names, (std::vector<std::string>{"balanced", "cv", "netfs", "nlp"}));
  EXPECT_EQ(j["profiles"][1]["knobs"]["BatchBytes"], 128u << 20);
  EXPECT_EQ(j["profiles"][2]["knobs"]["MaxReaders"], 4);
}

TEST_F(PlanList, FileOverridesBuiltinsAndAddsProfiles) {
  const auto r = list("--profiles " + tree.path("site.conf"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("the profiles file " + tree.path("site.conf") + " (given with --profiles)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# built-ins overridden by the file: cv (line 3)"), std::string::npos);
  EXPECT_NE(r.out.find("# caps: line 2 of the file\nDefaults DefaultProfile=video "
                       "MaxWorkerFraction=1 MaxPrefetch=32 "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# cv: line 3 of the file, overrides the built-in (WorkerFraction 0.85 "
                       "-> 0.8, BatchBytes 128M -> 192M)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# video: line 4 of the file, new (keys not given come from the built-in "
                       "balanced); the default profile"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("# nlp: built-in\n"), std::string::npos);

  const auto j = json::parse(list("--json --profiles " + tree.path("site.conf")).out);
  EXPECT_EQ(j["file"], tree.path("site.conf"));
  EXPECT_EQ(j["caps"]["line"], 2);
  EXPECT_EQ(j["overridden_builtins"], json::array({"cv"}));
  const json& cv = j["profiles"][1];
  EXPECT_EQ(cv["name"], "cv");
  EXPECT_EQ(cv["line"], 3);
  EXPECT_EQ(cv["changed"]["WorkerFraction"], "0.85 -> 0.8");
  EXPECT_EQ(cv["knobs"]["WorkerFraction"], 0.8);
  const json& video = j["profiles"][4];
  EXPECT_EQ(video["origin"], "file");
  EXPECT_EQ(video["base"], "balanced");
  EXPECT_TRUE(video["default"]);
  EXPECT_EQ(video["knobs"]["MainCores"], 2);
}

TEST_F(PlanList, TheListingIsAProfilesFileOfTheSameSet) {
  for (const std::string& args : {"--profiles " + tree.path("site.conf"), no_plugstack()}) {
    const auto r = list(args);
    ASSERT_EQ(r.status, 0) << r.out;
    ProfileSet again = parse_profiles(r.out, "listing");
    ProfileSet want =
        args == no_plugstack() ? builtin_profiles() : load_profiles(tree.path("site.conf"));
    // BatchBytes=0 means the default size, which the listing writes out.
    for (ProfileSet* set : {&again, &want})
      for (auto& [name, p] : set->profiles)
        if (p.batch_bytes == 0) p.batch_bytes = kDefaultBatchBytes;
    EXPECT_EQ(again.caps, want.caps) << r.out;
    EXPECT_EQ(again.profiles, want.profiles) << r.out;
  }
}

TEST_F(PlanList, TheFileComesFromThePluginsPlugstackLine) {
  const std::string site = tree.path("site.conf");
  tree.write("off.conf",
             "# shipped disabled\n#optional /usr/lib/x/spank_stoker.so enable=opt-in\n");
  tree.write("on.conf",
             "# site\n\noptional /usr/lib/x/spank_stoker.so enable=always profiles=" + site + "\n");
  tree.write("none.conf", "required spank_stoker.so enable=opt-in\n");
  auto chosen = [&](const std::string& args) {
    const auto r = list(args + " --json");
    EXPECT_EQ(r.status, 0) << r.out;
    const json j = json::parse(r.out);
    return (j["file"].is_null() ? std::string("-") : j["file"].get<std::string>()) + " | " +
           j["chosen_by"].get<std::string>();
  };
  EXPECT_EQ(chosen("--plugstack " + tree.path("off.conf")),
            "- | " + tree.path("off.conf") + " has no active line for spank_stoker.so");
  EXPECT_EQ(chosen("--plugstack " + tree.path("on.conf")),
            site + " | the profiles= of the plugin's line at " + tree.path("on.conf") + ":3");
  EXPECT_EQ(chosen("--plugstack " + tree.path("none.conf")),
            "- | the plugin's line at " + tree.path("none.conf") + ":1 names no profiles file");
  // STOKER_PROFILES, then --profiles, win over the plugstack line.
  setenv("STOKER_PROFILES", site.c_str(), 1);
  EXPECT_EQ(chosen("--plugstack " + tree.path("off.conf")), site + " | from STOKER_PROFILES");
  EXPECT_EQ(chosen("--profiles " + site + " --plugstack " + tree.path("off.conf")),
            site + " | given with --profiles");
  unsetenv("STOKER_PROFILES");
}

class FaultsPlanList : public PlanList {};

TEST_F(FaultsPlanList, BrokenProfilesFileExitsTwoNamingTheWord) {
  tree.write("bad.conf", "Profile=cv WorkerFraktion=0.8\n");
  const auto r = list("--profiles " + tree.path("bad.conf"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("stoker: error: " + tree.path("bad.conf") + ":1:12: unknown key "),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace stoker
