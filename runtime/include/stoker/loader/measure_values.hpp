// The loader's value of each quantity in run_measures(): the one place that knows where in
// LoaderStats a measure lives (or how it is derived from it).
#pragma once

#include <cstdint>
#include <variant>

#include "stoker/loader/loader_stats.hpp"
#include "stoker/record/run_measures.hpp"

namespace stoker {

// A whole number (counts, batches, bytes, nanoseconds), a number (shares, rates) or a flag.
using MeasureValue = std::variant<uint64_t, double, bool>;

MeasureValue measure_value(const LoaderStats& stats, Measure id);

// The value in the unit Prometheus, the run record and `stoker bench` use: nanoseconds as
// seconds (a number), the rest as they are (whole numbers stay whole: exact past 2^53).
MeasureValue base_value(const MeasureValue& value, MeasureUnit unit);
// The same as a number (a flag as 0 or 1).
double measure_in_base_unit(const MeasureValue& value, MeasureUnit unit);

}  // namespace stoker
