// A Plan field's value (plan_fields.hpp) as JSON: `stoker plan --json` and its what-if rows.
#pragma once

#include <nlohmann/json.hpp>
#include <variant>

#include "stoker/plan/plan_fields.hpp"

namespace stoker::cli {

inline nlohmann::json field_json(const PlanField& field, const Plan& plan) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, field.codec.value(plan));
}

}  // namespace stoker::cli
