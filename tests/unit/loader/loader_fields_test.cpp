// LoaderOptions' table: one row per option a user sets, each set and read back through its
// row, and the flags `stoker bench` makes from it parse and refuse by the row's bounds.
#include "stoker/loader/loader_fields.hpp"

#include <gtest/gtest.h>

#include <set>

#include "option_rows.hpp"

#include "loader_fixture.hpp"

using namespace stoker;

TEST(LoaderFields, EveryRowSetsAndReadsItsOwnMember) {
  std::set<std::string> names;
  for (const OptionField<LoaderOptions>& row : loader_fields()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " twice";
    EXPECT_NE(std::string(row.help), "") << row.name;
    LoaderOptions o;
    const OptionValue v = test::another_value(row);
    row.set(o, v);
    EXPECT_EQ(row.get(o), v) << row.name;
  }
  for (const char* name : {"batch_size", "workers", "prefetch", "max_depth", "seed", "on_corrupt",
                           "max_skip_fraction", "shuffle_buffer", "world_size", "rank"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
}

TEST(LoaderFields, NoneSetsThePlansZero) {
  const OptionField<LoaderOptions>& workers = *find_option(loader_fields(), "workers");
  ASSERT_NE(workers.none, nullptr);
  LoaderOptions o;
  o.workers = 5;
  workers.set(o, std::monostate{});
  EXPECT_EQ(o.workers, 0);  // 0: the plan's
}

TEST(FaultsLoaderFields, AFlagOutsideItsRowIsAnErrorNamingTheFlag) {
  const OptionField<LoaderOptions>& workers = *find_option(loader_fields(), "workers");
  EXPECT_EQ(std::get<uint64_t>(option_from_text(workers, "--workers", "4")), 4u);
  const std::string e = test::error_of([&] { option_from_text(workers, "--workers", "0"); });
  EXPECT_NE(e.find("--workers=0"), std::string::npos) << e;
  const OptionField<LoaderOptions>& skip = *find_option(loader_fields(), "max_skip_fraction");
  EXPECT_NE(test::error_of([&] {
              option_from_text(skip, "--max-skip-fraction", "1.5");
            }).find("--max-skip-fraction=1.5"),
            std::string::npos);
  const OptionField<LoaderOptions>& policy = *find_option(loader_fields(), "on_corrupt");
  EXPECT_NE(test::error_of([&] {
              option_from_text(policy, "--on-corrupt", "ignore");
            }).find("expected one of error, skip"),
            std::string::npos);
}
