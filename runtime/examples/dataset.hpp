// The trainer's two tasks on stoker's loaders:
//  images: an image folder through the JPEG train pipeline (random-resized crop to a small
//          square, flip, normalise, float32 CHW); predict the class (the folder).
//  tokens: a token file in windows of seq_len + 1; predict the last token (mod classes)
//          from a bag of the seq_len before it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "stoker/loader/dataset.hpp"
#include "train_options.hpp"

namespace stoker::train {

struct Dataset {
  std::shared_ptr<const Source> source;
  std::shared_ptr<const Transform> transform;
  bool tokens = false;
  bool u32 = false;  // tokens: uint32 ids
  int seq_len = 0;   // tokens
  int inputs = 0;    // features per sample given to the model
  int classes = 0;
  std::string describe;  // one line
};

// The dataset of --data / --kind, opened by the runtime's one owner (stoker::open_dataset:
// an image folder listed once per job over MPI, in a world of `world_size` ranks) under the
// plan `plan_for` gives once the sample is known. Throws stoker::Error naming --data / --kind
// for a missing or unusable dataset.
Dataset open_training_data(const TrainOptions& o, uint64_t world_size, const PlanFor& plan_for);

}  // namespace stoker::train
