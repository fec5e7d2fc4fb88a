// The user's --stoker-* flags: accepted values and every message, exactly as the
// plugin prints them at submit time after "stoker: " (tests/unit/spank/boundary_test.cpp).
#include <gtest/gtest.h>

#include "error_text.hpp"
#include "stoker/plan/plan_input.hpp"
#include "stoker/plan/user_options.hpp"

namespace stoker {
namespace {

using test::error_text;

TEST(UserOptions, AcceptsEveryDocumentedValue) {
  UserOptions o;
  EXPECT_NO_THROW(set_user_option(o, "stoker", ""));
  EXPECT_EQ(o.enable, TuneRequest::On);
  EXPECT_NO_THROW(set_user_option(o, "--stoker", "off"));
  EXPECT_EQ(o.enable, TuneRequest::Off);
  EXPECT_NO_THROW(set_user_option(o, "stoker", "on"));
  EXPECT_EQ(o.enable, TuneRequest::On);
  EXPECT_NO_THROW(set_user_option(o, "stoker-profile", "cv"));
  EXPECT_EQ(o.profile, "cv");
  EXPECT_NO_THROW(set_user_option(o, "stoker-workers", "12"));
  EXPECT_EQ(o.overrides.workers, 12);
  EXPECT_NO_THROW(set_user_option(o, "stoker-workers", "auto"));
  EXPECT_FALSE(o.overrides.workers);
  EXPECT_NO_THROW(set_user_option(o, "--stoker-prefetch", "4096"));
  EXPECT_EQ(o.overrides.prefetch, 4096);
  EXPECT_NO_THROW(set_user_option(o, "stoker-bind", "even"));
  EXPECT_EQ(o.overrides.bind, BindMode::Even);
  EXPECT_NO_THROW(set_user_option(o, "stoker-bind", "none"));
  EXPECT_EQ(o.overrides.bind, BindMode::None);
  EXPECT_NO_THROW(set_user_option(o, "stoker-mem-bind", "strict"));
  EXPECT_EQ(o.overrides.mem_bind, MemBind::Strict);
  EXPECT_NO_THROW(set_user_option(o, "stoker-mem-bind", "none"));
  EXPECT_EQ(o.overrides.mem_bind, MemBind::None);
  EXPECT_NO_THROW(set_user_option(o, "stoker-pin-memory", "no"));
  EXPECT_EQ(o.overrides.pin_memory, PinMode::No);
  EXPECT_NO_THROW(set_user_option(o, "stoker-verbose", ""));
  EXPECT_TRUE(o.verbose);
  EXPECT_EQ(o.given, (std::vector<std::string>{
                         "--stoker-workers=12", "--stoker-workers=auto", "--stoker-prefetch=4096",
                         "--stoker-bind=even", "--stoker-bind=none", "--stoker-mem-bind=strict",
                         "--stoker-mem-bind=none", "--stoker-pin-memory=no"}));
}

struct BadFlag {
  const char* flag;
  const char* value;
  const char* message;
};

class UserOptionErrors : public testing::TestWithParam<BadFlag> {};

TEST_P(UserOptionErrors, ExactLineAndOptionsUnchanged) {
  UserOptions o;
  o.overrides.workers = 3;
  UserOptions before = o;
  EXPECT_EQ(error_text([&] { set_user_option(o, GetParam().flag, GetParam().value); }),
            GetParam().message);
  EXPECT_EQ(o.overrides.workers, before.overrides.workers);
  EXPECT_EQ(o.enable, before.enable);
  EXPECT_EQ(o.profile, before.profile);
  EXPECT_TRUE(o.given.empty());
}

INSTANTIATE_TEST_SUITE_P(
    UserOptions, UserOptionErrors,
    testing::Values(
        BadFlag{"stoker", "maybe", "--stoker=maybe: expected on or off (no value means on)"},
        BadFlag{"stoker-profile", "",
                "--stoker-profile=: expected a profile name (1-64 "
                "letters, digits, '-' or '_')"},
        BadFlag{"stoker-profile", "c v",
                "--stoker-profile=c v: expected a profile name "
                "(1-64 letters, digits, '-' or '_')"},
        BadFlag{"stoker-workers", "abc",
                "--stoker-workers=abc: expected auto or a whole number from 1 to 1024"},
        BadFlag{"stoker-workers", "0",
                "--stoker-workers=0: expected auto or a whole number from 1 to 1024"},
        BadFlag{"stoker-workers", "1025",
                "--stoker-workers=1025: expected auto or a whole number from 1 to 1024"},
        BadFlag{"--stoker-workers", "-2",
                "--stoker-workers=-2: expected auto or a whole number from 1 to 1024"},
        BadFlag{"stoker-prefetch", "4097",
                "--stoker-prefetch=4097: expected auto or a whole number from 1 to 4096"},
        BadFlag{"stoker-prefetch", "",
                "--stoker-prefetch=: expected auto or a whole number from 1 to 4096"},
        BadFlag{"stoker-bind", "numa", "--stoker-bind=numa: expected gpu-numa, even or none"},
        BadFlag{"stoker-mem-bind", "interleave",
                "--stoker-mem-bind=interleave: expected local, strict or none"},
        BadFlag{"stoker-pin-memory", "on", "--stoker-pin-memory=on: expected auto, yes or no"},
        BadFlag{"stoker-verbose", "2", "--stoker-verbose=2: takes no value"},
        BadFlag{"stoker-turbo", "",
                "--stoker-turbo: unknown flag; the stoker flags are --stoker, "
                "--stoker-profile, --stoker-workers, --stoker-prefetch, --stoker-bind, "
                "--stoker-mem-bind, --stoker-pin-memory, --stoker-verbose"}));

// The one failure idiom: a refusal is a stoker::Error whose `where` is the flag as given.
TEST(UserOptions, ARefusalIsAnErrorNamingTheFlagAsGiven) {
  UserOptions o;
  try {
    set_user_option(o, "--stoker-workers", "abc");
    ADD_FAILURE() << "--stoker-workers=abc was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "--stoker-workers=abc");
    EXPECT_EQ(e.problem(), "expected auto or a whole number from 1 to 1024");
    EXPECT_EQ(e.todo(), "");
  }
}

TEST(UserOptions, ValidateUnknownProfileListsTheKnownOnes) {
  UserOptions o;
  ASSERT_NO_THROW(set_user_option(o, "stoker-profile", "video"));
  EXPECT_EQ(error_text([&] { validate_user_options(o, builtin_profiles()); }),
            "--stoker-profile=video: unknown profile; the admin's profiles are balanced, "
            "cv, netfs, nlp");
  ProfileSet site = parse_profiles("Profile=video", "site.conf");
  EXPECT_NO_THROW(validate_user_options(o, site));
  EXPECT_EQ(chosen_profile(TaskFacts{}, o, site), "video");
}

TEST(UserOptions, ValidatePrefetchOverTheCapNamesTheCap) {
  ProfileSet site = parse_profiles("Defaults MaxPrefetch=32", "site.conf");
  UserOptions o;
  ASSERT_NO_THROW(set_user_option(o, "stoker-prefetch", "32"));
  EXPECT_NO_THROW(validate_user_options(o, site));
  ASSERT_NO_THROW(set_user_option(o, "stoker-prefetch", "33"));
  EXPECT_EQ(error_text([&] { validate_user_options(o, site); }),
            "--stoker-prefetch=33: over the admin's cap MaxPrefetch=32");
}

TEST(UserOptions, AllowOverrideNoRejectsAnyTuningFlagButNotAProfile) {
  ProfileSet site = parse_profiles("Defaults AllowOverride=no DefaultProfile=cv", "site.conf");
  UserOptions o;
  ASSERT_NO_THROW(set_user_option(o, "stoker-profile", "nlp"));
  ASSERT_NO_THROW(set_user_option(o, "stoker-verbose", ""));
  ASSERT_NO_THROW(set_user_option(o, "stoker", "on"));
  EXPECT_NO_THROW(validate_user_options(o, site));
  for (auto [flag, value] : {std::pair{"stoker-pin-memory", "yes"},
                             {"stoker-workers", "auto"},
                             {"stoker-bind", "gpu-numa"}}) {
    UserOptions t = o;
    ASSERT_NO_THROW(set_user_option(t, flag, value));
    EXPECT_EQ(error_text([&] { validate_user_options(t, site); }),
              std::string("--") + flag + "=" + value +
                  ": this cluster does not allow overrides (AllowOverride=no); choose a profile "
                  "with --stoker-profile=NAME (balanced, cv, netfs, nlp)");
  }
}

TEST(UserOptions, ChosenProfileDefaultsToTheAdminsDefault) {
  ProfileSet site = parse_profiles("Defaults DefaultProfile=nlp", "site.conf");
  EXPECT_EQ(chosen_profile(TaskFacts{}, UserOptions{}, site), "nlp");
}

TEST(UserOptions, OneTableOfFlags) {
  std::string names;
  for (const UserFlag& f : kUserFlags) {
    names += std::string(names.empty() ? "" : " ") + f.name;
    EXPECT_EQ(f.has_arg == 0, f.arginfo == nullptr) << f.name;
    UserOptions o;
    EXPECT_EQ(error_text([&] {
                set_user_option(o, f.name, f.has_arg == 1 ? "auto" : "");
              }).find("unknown flag"),
              std::string::npos)
        << f.name << ": every registered flag is parsed";
  }
  EXPECT_EQ(names,
            "stoker stoker-profile stoker-workers stoker-prefetch stoker-bind stoker-mem-bind "
            "stoker-pin-memory stoker-verbose");
}

}  // namespace
}  // namespace stoker
