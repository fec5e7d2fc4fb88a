// The trainer's two tasks on stoker's loaders:
//  images: an image folder through the JPEG train pipeline (random-resized crop to a small
//          square, flip, normalise, float32 CHW); predict the class (the folder).
//  tokens: a token file in windows of seq_len + 1; predict the last token (mod classes)
//          from a bag of the seq_len before it.
#pragma once

#include <memory>
#include <string>

#include "stoker/sources/source.hpp"
#include "stoker/transforms/transform.hpp"
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

// Throws stoker::Error naming --data / --kind for a missing or unusable dataset.
Dataset open_dataset(const TrainOptions& o);

}  // namespace stoker::train
