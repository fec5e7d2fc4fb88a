// The one description of the Plan's fields. Every writer and reader walks it: the STOKER_*
// environment (plan_env.cpp), `stoker plan` (JSON, the table, the what-if columns), the
// Python binding (stoker.Plan's attributes) and the plugin's --stoker-verbose line. A new
// field is one row of plan_fields() (plan_fields.cpp), beside its member of Plan and its
// planner logic; tests/unit/plan/plan_fields_test.cpp round-trips every row.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "stoker/common/launch_env.hpp"
#include "stoker/plan/plan.hpp"

namespace stoker {

// A field's value as JSON and Python show it: a number, a flag, a text ("0-5,12" for a CPU
// list, "even" for a mode) or a list.
using FieldValue =
    std::variant<bool, int64_t, uint64_t, std::string, std::vector<int>, std::vector<std::string>>;

using PlanText = std::function<std::string(const Plan&)>;

// How one type of field is written, read and shown (the codecs: plan_fields.cpp).
struct FieldCodec {
  const char* type;  // "name", "text", "count", "bytes", "cpus", "numbers", "names", "flag", "mode"
  PlanText write;    // its STOKER_* value
  // Sets the field from its variable `name`, which is set; throws stoker::Error naming the
  // variable when its value is garbled (throw_garbled_env).
  std::function<void(Plan&, const EnvGetter& env, const std::string& name)> read;
  std::function<FieldValue(const Plan&)> value;  // JSON and Python
  PlanText human;  // for people: "-" for none, "64.0 MiB" for bytes, "yes"/"no" for a flag
};

// Where a human view shows a field. The views: `stoker plan`'s table (label, then text), the
// plugin's verbose line (label=text) and the what-if table (a column headed by label; in
// --json its key is the field's name, its value the field's).
enum class Form { Human, Env };  // the codec's human text, or its STOKER_* value
struct Shown {
  Shown() = default;
  Shown(const char* label, int place, Form form = Form::Human)
      : label(label), place(place), form(form) {}
  // A text of its own: a row of the table that also says other fields.
  Shown(const char* label, int place, PlanText text)
      : label(label), place(place), text(std::move(text)) {}

  const char* label = nullptr;  // nullptr: the view leaves the field out
  int place = 0;                // a view shows its fields by place, lowest first
  Form form = Form::Human;
  PlanText text;  // when set, instead of `form`
};

struct PlanField {
  const char* name;     // the --json key and the Python attribute
  const char* env;      // its STOKER_* variable
  bool required;        // must be set when STOKER_PLAN_VERSION is; else absent = Plan's default
  const char* example;  // a valid value of the variable, other than the default (docs, tests)
  const char* help;     // what the variable says, one sentence (docs/reference.md)
  FieldCodec codec;
  Shown table = {}, line = {}, whatif = {};
};

// Every field, in the order of the STOKER_* variables (docs/reference.md's table).
const std::vector<PlanField>& plan_fields();

enum class PlanView { Table, Line, WhatIf };

struct ShownField {
  const PlanField& field;
  const char* label;
  std::string text;
};

// The fields `view` shows for `plan`, in its order, with their labels and texts.
std::vector<ShownField> show(const Plan& plan, PlanView view);

}  // namespace stoker
