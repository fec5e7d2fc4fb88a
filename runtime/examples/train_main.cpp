// stoker_train: a small data-parallel trainer fed by stoker's loader. See docs/user-guide.md,
// "Multi-node training, from sbatch to throughput", and sbatch_templates/.
//
//   srun --mpi=pmix stoker_train --data /data/images --epochs 2
//   stoker_train --data tokens.bin --kind tokens --seq-len 64 --max-steps 200
#include <CLI/CLI.hpp>
#include <cstdio>

#include "grad_reduce.hpp"
#include "stoker/common/error.hpp"
#include "trainer.hpp"

int main(int argc, char** argv) {
  stoker::train::TrainOptions o;
  CLI::App app{"stoker_train: data-parallel MLP / softmax regression on stoker's loader"};
  app.add_option("--data", o.data, "image folder (class subfolders) or token file")->required();
  app.add_option("--kind", o.kind, "images | tokens | auto")->capture_default_str();
  app.add_option("--size", o.image_size, "images: crop side in pixels")->capture_default_str();
  app.add_option("--seq-len", o.seq_len, "tokens: window length")->capture_default_str();
  app.add_option("--token-dtype", o.token_dtype, "tokens: uint16 | uint32")->capture_default_str();
  app.add_option("--classes", o.classes, "tokens: predict the next token mod this")
      ->capture_default_str();
  app.add_option("--buckets", o.buckets, "tokens: hashed bag-of-tokens input size")
      ->capture_default_str();
  app.add_option("--hidden", o.hidden, "hidden units (0: softmax regression)")
      ->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "samples per rank per step")->capture_default_str();
  app.add_option("--epochs", o.epochs, "epochs")->capture_default_str();
  app.add_option("--max-steps", o.max_steps, "stop after this many steps (0: all epochs)")
      ->capture_default_str();
  app.add_option("--lr", o.lr, "SGD learning rate (0: 0.05 images, 0.5 tokens)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "shuffle, augmentation and init seed")->capture_default_str();
  app.add_option("--device", o.device, "auto | cpu | gpu")->capture_default_str();
  app.add_option("--workers", o.workers, "loader workers (0: the plan's)")->capture_default_str();
  app.add_option("--prefetch", o.prefetch, "starting prefetch depth (0: the plan's)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  stoker::World world;
  try {
    stoker::train::run(o, world);
    return 0;
  } catch (const std::exception& e) {
    stoker::train::fail(world, e);  // several ranks: run() stopped the world already
    return 2;
  }
}
