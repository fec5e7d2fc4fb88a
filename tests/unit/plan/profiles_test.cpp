// The profiles file: built-ins, the parser's accepted syntax, every error with its
// exact message, the shipped example file, and a fuzz-style robustness test.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "enum_names_check.hpp"
#include "run_command.hpp"
#include "stoker/common/error.hpp"
#include "stoker/plan/profiles.hpp"

namespace stoker {
namespace {

const std::string kProfileKeys =
    "Description, WorkerFraction, MainCores, PrefetchPerWorker, MinPrefetch, MaxPrefetch, "
    "MemShare, PinMemory, MaxReaders, SmtAsCores, SpillCores, BatchBytes, Stream, ShuffleBuffer";
const std::string kCapsKeys =
    "DefaultProfile, MaxWorkerFraction, MaxPrefetch, MaxMemShare, AllowOverride";

std::string error_of(const std::string& text) {
  try {
    parse_profiles(text, "site.conf");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Profiles, BuiltinsHaveTheFourDocumentedProfiles) {
  ProfileSet set = builtin_profiles();
  EXPECT_EQ(set.names(), "balanced, cv, netfs, nlp");
  EXPECT_EQ(set.caps.default_profile, "balanced");
  for (const auto& [name, p] : set.profiles) EXPECT_EQ(check_profile(p), "") << name;
  EXPECT_EQ(set.get("cv").pin_memory, PinMode::Yes);
  EXPECT_EQ(set.get("cv").prefetch_per_worker, 2);
  EXPECT_GE(set.get("nlp").prefetch_per_worker, 4);
  EXPECT_LE(set.get("nlp").prefetch_per_worker, 6);
  EXPECT_GT(set.get("netfs").max_readers, 0);
  EXPECT_LT(set.get("netfs").max_prefetch, set.get("balanced").max_prefetch);
  EXPECT_TRUE(set.get("netfs").stream);  // network storage: shards streamed, no seek storm
  EXPECT_FALSE(set.get("balanced").stream);
  EXPECT_FALSE(set.get("cv").stream);
}

TEST(Profiles, GetUnknownListsKnownProfiles) {
  try {
    builtin_profiles().get("video");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "profile: unknown profile 'video' (known profiles: balanced, cv, netfs, nlp)");
  }
}

TEST(Profiles, ParsesEveryKeyAndKeepsBaseValues) {
  ProfileSet set = parse_profiles(
      "# site profiles\n"
      "Defaults DefaultProfile=big MaxWorkerFraction=0.9 MaxPrefetch=32 MaxMemShare=0.4 "
      "AllowOverride=no   # caps\n"
      "\n"
      "\tProfile=big Description=\"large # not a comment\" WorkerFraction=.5 MainCores=2 "
      "PrefetchPerWorker=3 MinPrefetch=1 MaxPrefetch=9 MemShare=1 PinMemory=no MaxReaders=7 "
      "SmtAsCores=yes SpillCores=no BatchBytes=1.5GiB Stream=yes ShuffleBuffer=64\r\n"
      "Profile=cv MemShare=0.2\n"
      "Profile=x MaxReaders=none",
      "site.conf");
  EXPECT_EQ(set.names(), "balanced, big, cv, netfs, nlp, x");
  EXPECT_EQ(set.caps, (Caps{"big", 0.9, 32, 0.4, false}));
  const Profile& big = set.get("big");
  EXPECT_EQ(big.description, "large # not a comment");
  EXPECT_EQ(big.worker_fraction, 0.5);
  EXPECT_EQ(big.main_cores, 2);
  EXPECT_EQ(big.prefetch_per_worker, 3);
  EXPECT_EQ(big.min_prefetch, 1);
  EXPECT_EQ(big.max_prefetch, 9);
  EXPECT_EQ(big.mem_share, 1.0);
  EXPECT_EQ(big.pin_memory, PinMode::No);
  EXPECT_EQ(big.max_readers, 7);
  EXPECT_TRUE(big.smt_as_cores);
  EXPECT_FALSE(big.spill_cores);
  EXPECT_EQ(big.batch_bytes, uint64_t{3} << 29);
  EXPECT_TRUE(big.stream);
  EXPECT_EQ(big.shuffle_buffer, 64u);
  // cv keeps the built-in cv's other values; a new name starts from built-in balanced.
  Profile cv = builtin_profiles().get("cv");
  cv.mem_share = 0.2;
  EXPECT_EQ(set.get("cv"), cv);
  Profile x = builtin_profiles().get("balanced");
  x.name = "x";
  x.description = "";
  EXPECT_EQ(set.get("x"), x);
}

TEST(Profiles, EmptyTextGivesTheBuiltins) {
  ProfileSet set = parse_profiles("", "empty.conf");
  EXPECT_EQ(set.profiles, builtin_profiles().profiles);
  EXPECT_EQ(set.caps, Caps{});
}

TEST(Profiles, ShippedExampleFileParses) {
  ProfileSet set = load_profiles(STOKER_SOURCE_DIR "/sbatch_templates/admin/stoker.conf");
  EXPECT_EQ(set.names(), "balanced, cv, netfs, nlp, video");
  EXPECT_EQ(set.caps.max_prefetch, 64);
  EXPECT_EQ(set.get("video").main_cores, 2);
  EXPECT_EQ(set.get("netfs").max_readers, 4);
}

TEST(Profiles, UnreadableFileNamesThePath) {
  try {
    load_profiles("/nonexistent/stoker.conf");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent/stoker.conf: cannot read the profiles file: No such file or "
                 "directory (check the path and its permissions)");
  }
}

// `stoker plan --profiles DIR` (or STOKER_PROFILES=DIR, or the plugin's profiles=) used to
// read the folder as an empty file and plan with the built-ins, exit 0, without a word.
TEST(FaultsProfiles, AProfilesPathThatIsNoRegularFileIsAnErrorNamingIt) {
  const std::string dir = testing::TempDir();
  for (const auto& [path, what] : {std::pair<std::string, std::string>{dir, "is a folder"},
                                   {"/dev/null", "is a special file"}}) {
    try {
      load_profiles(path);
      ADD_FAILURE() << path << " was read as a profiles file";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), path + ": " + what +
                                           ", not a profiles file (name the profiles file "
                                           "itself (e.g. /etc/stoker/stoker.conf))");
    }
  }
  if (!std::filesystem::exists(test::stoker_cli()))
    GTEST_SKIP() << "the stoker command was not built";
  const std::string cli = test::stoker_cli() + " plan ";
  for (const std::string& command :
       {cli + "--profiles " + dir, "STOKER_PROFILES=" + dir + " " + cli,
        cli + "--list --profiles " + dir}) {
    const test::CommandResult r = test::run_command(command + " 2>&1");
    EXPECT_EQ(r.status, 2) << command << ": " << r.out;
    EXPECT_NE(r.out.find(dir + ": is a folder, not a profiles file"), std::string::npos)
        << command << ": " << r.out;
  }
}

struct ErrorCase {
  std::string text, message;
};

class ProfileErrors : public testing::TestWithParam<ErrorCase> {};

TEST_P(ProfileErrors, ExactMessage) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Profiles, ProfileErrors,
    testing::Values(
        ErrorCase{"Profile=cv Foo=1",
                  "site.conf:1:12: unknown key 'Foo' in 'Foo=1' (allowed on a Profile line: " +
                      kProfileKeys + ")"},
        ErrorCase{"Profile=cv workerfraction=0.5",
                  "site.conf:1:12: unknown key 'workerfraction' in 'workerfraction=0.5' (allowed "
                  "on a Profile line: " +
                      kProfileKeys + "; keys are case-sensitive: write WorkerFraction)"},
        ErrorCase{"# caps\nDefaults MaxWorkers=3",
                  "site.conf:2:10: unknown key 'MaxWorkers' in 'MaxWorkers=3' (allowed on a "
                  "Defaults line: " +
                      kCapsKeys + ")"},
        ErrorCase{"Profile=cv MaxReaders=4 MaxPrefetch=2 MinPrefetch=1 Foo",
                  "site.conf:1:53: 'Foo' is not Key=Value (write each setting as Key=Value with "
                  "no spaces around '=')"},
        ErrorCase{"Profile=cv =3",
                  "site.conf:1:12: '=3' is not Key=Value (write each setting as Key=Value with "
                  "no spaces around '=')"},
        ErrorCase{"Profile=cv WorkerFraction=abc",
                  "site.conf:1:12: bad value in 'WorkerFraction=abc' (WorkerFraction expects a "
                  "fraction in (0,1], e.g. 0.75)"},
        ErrorCase{"Profile=cv WorkerFraction=0",
                  "site.conf:1:12: bad value in 'WorkerFraction=0' (WorkerFraction expects a "
                  "fraction in (0,1], e.g. 0.75)"},
        ErrorCase{"Profile=cv MemShare=1.01",
                  "site.conf:1:12: bad value in 'MemShare=1.01' (MemShare expects a fraction in "
                  "(0,1], e.g. 0.25)"},
        ErrorCase{"Profile=cv MainCores=0",
                  "site.conf:1:12: bad value in 'MainCores=0' (MainCores expects a whole number "
                  "from 1 to 64)"},
        ErrorCase{"Profile=cv PrefetchPerWorker=-1",
                  "site.conf:1:12: bad value in 'PrefetchPerWorker=-1' (PrefetchPerWorker "
                  "expects a whole number from 1 to 64)"},
        ErrorCase{"Profile=cv MaxPrefetch=4097",
                  "site.conf:1:12: bad value in 'MaxPrefetch=4097' (MaxPrefetch expects a whole "
                  "number from 1 to 4096)"},
        ErrorCase{"Profile=cv PinMemory=true",
                  "site.conf:1:12: bad value in 'PinMemory=true' (PinMemory expects auto, yes "
                  "or no)"},
        ErrorCase{"Profile=cv MaxReaders=0",
                  "site.conf:1:12: bad value in 'MaxReaders=0' (MaxReaders expects none or a "
                  "whole number from 1 to 1024)"},
        ErrorCase{"Profile=cv SmtAsCores=1",
                  "site.conf:1:12: bad value in 'SmtAsCores=1' (SmtAsCores expects yes or no)"},
        ErrorCase{"Profile=cv SpillCores=maybe",
                  "site.conf:1:12: bad value in 'SpillCores=maybe' (SpillCores expects yes or "
                  "no)"},
        ErrorCase{"Profile=cv BatchBytes=12X",
                  "site.conf:1:12: bad value in 'BatchBytes=12X' (BatchBytes expects a size in "
                  "bytes such as 64M or 1GiB (K, M, G, T = KiB, MiB, GiB, TiB))"},
        ErrorCase{"Profile=netfs ShuffleBuffer=0",
                  "site.conf:1:15: bad value in 'ShuffleBuffer=0' (ShuffleBuffer expects a whole "
                  "number of samples from 1 to 16777216)"},
        ErrorCase{"Profile=netfs Stream=on",
                  "site.conf:1:15: bad value in 'Stream=on' (Stream expects yes or no)"},
        ErrorCase{"Defaults AllowOverride=maybe",
                  "site.conf:1:10: bad value in 'AllowOverride=maybe' (AllowOverride expects "
                  "yes or no)"},
        ErrorCase{"Defaults DefaultProfile=a/b",
                  "site.conf:1:10: bad value in 'DefaultProfile=a/b' (DefaultProfile expects a "
                  "profile name (letters, digits, '-', '_'))"},
        ErrorCase{"Defaults MaxMemShare=0.5 MaxMemShare=0.4",
                  "site.conf:1:26: 'MaxMemShare' is given twice on this line (first at column "
                  "10) (keep one MaxMemShare=...)"},
        ErrorCase{"Profile=cv\nProfile=nlp\n Profile=cv",
                  "site.conf:3:2: profile 'cv' is defined twice (first at line 1) (keep one "
                  "Profile=cv line)"},
        ErrorCase{"Defaults\nDefaults MaxPrefetch=3",
                  "site.conf:2:1: a second Defaults line (the first is at line 1) (put all caps "
                  "on one Defaults line)"},
        ErrorCase{"Profile=x\nDefaults   DefaultProfile=video",
                  "site.conf:2:12: DefaultProfile=video names no profile (known profiles: "
                  "balanced, cv, netfs, nlp, x)"},
        ErrorCase{"Profile=x MaxPrefetch=1",
                  "site.conf:1:1: profile 'x': MinPrefetch=2 is above MaxPrefetch=1 (change the "
                  "values on this line (keys not given keep the base profile's values))"},
        ErrorCase{"WorkerFraction=0.5",
                  "site.conf:1:1: unexpected 'WorkerFraction=0.5' at the start of a line (a line "
                  "is 'Profile=NAME Key=Value ...' or 'Defaults Key=Value ...')"},
        ErrorCase{"profile=cv",
                  "site.conf:1:1: unexpected 'profile=cv' at the start of a line (a line is "
                  "'Profile=NAME Key=Value ...' or 'Defaults Key=Value ...'; keys are "
                  "case-sensitive)"},
        ErrorCase{"Profile=",
                  "site.conf:1:1: bad profile name in 'Profile=' (a name is 1-64 letters, "
                  "digits, '-' or '_')"},
        ErrorCase{"Profile=c.v",
                  "site.conf:1:1: bad profile name in 'Profile=c.v' (a name is 1-64 letters, "
                  "digits, '-' or '_')"},
        ErrorCase{"Profile=cv Description=\"open",
                  "site.conf:1:24: unterminated quote in 'Description=\"open' (close the quote on "
                  "the same line)"},
        ErrorCase{"Profile=cv Desc\"ription\"=x",
                  "site.conf:1:12: misplaced quote in 'Desc\"ription\"=x' (quote a whole value: "
                  "Key=\"some text\")"},
        ErrorCase{"Profile=cv Description=a\"b c\"",
                  "site.conf:1:12: misplaced quote in 'Description=a\"b c\"' (quote a whole "
                  "value: Key=\"some text\")"},
        ErrorCase{"Profile=cv Description=\"a\"\"b\"",
                  "site.conf:1:12: misplaced quote in 'Description=\"a\"\"b\"' (a quoted value "
                  "cannot hold a quote)"},
        ErrorCase{std::string("Profile=cv\x01"),
                  "site.conf:1:11: unexpected control character 0x01 (use plain text; '#' starts "
                  "a comment)"}));

// Random bytes and random mutations of valid lines: the parser either returns a set
// whose profiles all pass check_profile, or throws stoker::Error. Nothing else.
TEST(Profiles, FuzzNeverCrashesAndAlwaysErrorsOrValid) {
  const std::vector<std::string> valid = {
      "Defaults DefaultProfile=cv MaxWorkerFraction=0.9 MaxPrefetch=32 MaxMemShare=0.5 "
      "AllowOverride=yes",
      "Profile=cv WorkerFraction=0.8 PrefetchPerWorker=2 MemShare=0.25 PinMemory=yes",
      "Profile=netfs MaxReaders=4 MaxPrefetch=8 Description=\"slow disks\" # comment",
      "Profile=n2 MainCores=2 SmtAsCores=yes BatchBytes=64M MinPrefetch=1"};
  const std::string alphabet = "=\"# \t\n\r.-_0123456789aAzZPDefMx\x01\xff";
  std::mt19937 rng(12345);
  int errors = 0, parsed = 0;
  auto check = [&](const std::string& text) {
    try {
      ProfileSet set = parse_profiles(text, "fuzz.conf");
      for (const auto& [name, p] : set.profiles) ASSERT_EQ(check_profile(p), "") << text;
      ASSERT_TRUE(set.has(set.caps.default_profile)) << text;
      ++parsed;
    } catch (const Error& e) {
      ASSERT_EQ(e.where().rfind("fuzz.conf:", 0), 0u) << text;
      ++errors;
    }
  };
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    size_t len = rng() % 80;
    for (size_t k = 0; k < len; ++k)
      text += (i % 2) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    check(text);
  }
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    for (int l = 0; l < 3; ++l) text += valid[rng() % valid.size()] + "\n";
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text.erase(at, 1 + rng() % 3);
          break;
        case 1:
          text.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        default:
          text[at] = static_cast<char>(rng() % 256);
      }
    }
    check(text);
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(parsed, 0);
  std::printf("fuzz: %d parsed, %d rejected with an error\n", parsed, errors);
}

TEST(Profiles, TheAdminsFileElseTheBuiltIns) {
  EXPECT_EQ(profiles_or_builtins(std::nullopt).profiles, builtin_profiles().profiles);
  const std::string file = STOKER_SOURCE_DIR "/sbatch_templates/admin/stoker.conf";
  EXPECT_EQ(profiles_or_builtins(file).profiles, load_profiles(file).profiles);
  EXPECT_THROW(profiles_or_builtins(std::string("/nonexistent/stoker.conf")), Error);
}

TEST(PinMode, OneTableForPinMemoryAndTheFlag) {
  expect_names_round_trip(
      kPinModeNames, [](PinMode m) { return to_string(m); }, parse_pin_mode);
  EXPECT_EQ(names_of(kPinModeNames), "auto, yes or no");
}

}  // namespace
}  // namespace stoker
