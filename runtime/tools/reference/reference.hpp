// docs/reference.md, written from the code's tables by `stoker_reference` (reference_main.cpp):
// one function per part of the page, each walking its table, and the few Markdown helpers
// they share. A program of its own, not a `stoker` subcommand: the page is the project's,
// not the user's, so the shipped command carries none of it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace stoker::reference {

// `text` as a table cell: '|' escaped, so a value such as "auto|N" stays in its column.
std::string cell(const std::string& text);
// `text` in backticks, as a cell ("" stays empty).
std::string code(const std::string& text);
// `text` in lines broken at spaces before 100 columns, each after the first indented by
// `indent` (a list item's "  "), ending with a newline.
void wrap(std::ostream& out, const std::string& text, const std::string& indent = "");
// `text` wrapped, then a blank line.
void paragraph(std::ostream& out, const std::string& text);
// One table: the heading row, the rule, then each row.
void table(std::ostream& out, const std::vector<std::string>& heading,
           const std::vector<std::vector<std::string>>& rows);

// The parts of the page, in its order.
void user_flags(std::ostream& out);      // kUserFlags (reference_plan.cpp)
void plan_variables(std::ostream& out);  // plan_fields() and the plugin's own
void switches(std::ostream& out);        // the runtime's switches
void measures(std::ostream& out);  // run_measures(), the metrics file (reference_measures.cpp)
void loader_options(std::ostream& out);  // loader_fields(), image_fields() (reference_loader.cpp)

}  // namespace stoker::reference
