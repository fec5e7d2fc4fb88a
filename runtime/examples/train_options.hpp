// The example trainer's settings (command-line flags of stoker_train).
#pragma once

#include <cstdint>
#include <string>

namespace stoker::train {

struct TrainOptions {
  std::string data;           // an image folder (class subfolders) or a token file
  std::string kind = "auto";  // images | tokens | auto (folder: images, file: tokens)
  int image_size = 32;        // images: the side of the random-resized crop
  int seq_len = 64;           // tokens: window length (the context of the prediction)
  std::string token_dtype = "uint16";
  int classes = 16;          // tokens: predict (next token mod classes)
  int buckets = 256;         // tokens: input = bag of previous tokens hashed to buckets
  int hidden = 64;           // hidden units; 0: softmax regression
  uint64_t batch_size = 32;  // per rank
  int epochs = 1;
  uint64_t max_steps = 0;  // stop after this many steps in all (0: run every epoch)
  float lr = 0;            // SGD step; 0: 0.05 for images, 0.5 for tokens
  uint64_t seed = 0;
  std::string device = "auto";    // auto | cpu | gpu
  int workers = 0, prefetch = 0;  // override the plan's (0: the plan's)
};

}  // namespace stoker::train
