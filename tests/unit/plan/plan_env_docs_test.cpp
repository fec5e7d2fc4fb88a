// The reference page's list of the STOKER_* variables a rank finds (docs/reference.md, "The
// plan's variables") names exactly the variables plan_to_env() writes, and the plugin's own
// few beside them. The page is generated (ctest docs.reference); this holds its generator to
// the writer of the variables, not to the table it walks.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "stoker/plan/plan_env.hpp"

using namespace stoker;

namespace {

// The STOKER_* names in the first table after `heading` in the file `doc`.
std::set<std::string> table_variables(const std::string& doc, const std::string& heading) {
  std::ifstream in(std::string(STOKER_SOURCE_DIR) + "/" + doc);
  std::stringstream text;
  text << in.rdbuf();
  std::istringstream lines(text.str());
  std::set<std::string> names;
  bool in_section = false, in_table = false;
  const std::regex variable("`(STOKER_[A-Z_]+)`");
  for (std::string line; std::getline(lines, line);) {
    if (line == heading) in_section = true;
    if (!in_section) continue;
    if (line.rfind("|", 0) == 0) {
      in_table = true;
      // Only the first column: a meaning may name another variable.
      const std::string first = line.substr(0, line.find('|', 1));
      for (std::sregex_iterator m(first.begin(), first.end(), variable), end; m != end; ++m)
        names.insert((*m)[1]);
    } else if (in_table) {
      break;
    }
  }
  return names;
}

std::set<std::string> plan_variables() {
  std::set<std::string> names;
  for (const auto& [name, value] : plan_to_env(Plan{})) names.insert(name);
  return names;
}

}  // namespace

TEST(FaultsDocsTables, EveryStokerVariableOfThePlan) {
  const std::string heading = "## The plan's variables";
  EXPECT_EQ(table_variables("docs/reference.md", heading), plan_variables());
  // The plugin's own, in the section's next table.
  EXPECT_EQ(table_variables("docs/reference.md", "The plugin also sets, beside the plan:"),
            (std::set<std::string>{kExportedVar, kPlanSealVar}));
}
