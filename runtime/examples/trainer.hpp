// The example trainer's run: plan, world, data, model, then the data-parallel loop.
#pragma once

#include "stoker/distributed/world.hpp"
#include "train_options.hpp"

namespace stoker::train {

// Trains and prints the report. `world` is filled as soon as it is known (for the caller's
// error path). Throws stoker::Error for bad input and failures, naming the rank.
void run(const TrainOptions& options, World& world);

}  // namespace stoker::train
