// `stoker bench images|tokens`: the workloads and their options; the loader run and its
// report are in bench_run.cpp. `stoker bench images DIR --limit` measures the per-core
// limits instead (bench_limit.cpp): one thread running the same decode+transform in a tight
// loop over files held in memory, and the full decode alone (libjpeg-turbo or libpng).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench.hpp"
#include "command.hpp"
#include "stoker/common/error.hpp"
#include "stoker/loader/dataset.hpp"
#include "stoker/transforms/image_transforms.hpp"

namespace stoker::cli {

namespace {

// --- images ---------------------------------------------------------------------------

struct ImageArgs {
  Common c;
  std::vector<std::string> paths;
  int size = 224;
  std::string dtype = "float32", layout = "CHW";
  bool eval = false, limit = false, stream = false, no_labels = false;
  double seconds = 3;
};

// The images spec: tar shards when a path is a file or a folder holding shards, else an image
// folder (open_dataset detects which). Shards are streamed with --stream, under a profile that
// says Stream=yes, or when one is compressed (.tar.gz, .tar.zst: they cannot be read by random
// access): open_dataset decides by the loader's plan.
DatasetSpec image_spec(const ImageArgs& a) {
  ImageInput in;
  in.paths = a.paths;
  in.labels = !a.no_labels;
  if (a.stream) in.stream = true;
  ImageTransformOptions& o = in.transform;
  o.train = !a.eval;
  o.size = a.size;
  o.resize_shorter = (a.size * 256 + 112) / 224;  // ImageNet's 256 for 224
  const std::optional<DType> dtype = parse_dtype(a.dtype);
  if (!dtype || (*dtype != DType::F32 && *dtype != DType::F16 && *dtype != DType::U8)) {
    throw Error("--dtype", "unknown dtype '" + a.dtype + "'", "use float32, float16 or uint8");
  }
  o.dtype = *dtype;
  const std::optional<Layout> layout = parse_layout(a.layout);
  if (!layout) {
    throw Error("--layout", "unknown layout '" + a.layout + "'", "use " + names_of(kLayoutNames));
  }
  o.layout = *layout;
  return {in};
}

void run_images(ImageArgs a) {
  const DatasetSpec spec = image_spec(a);
  if (a.c.drop_cache_flag) a.c.drop_cache = a.paths;
  if (a.limit) return run_limit(a.c, a.seconds, spec);
  run_bench("images", spec, a.c, {{"size", a.size}});
}

// --- tokens ---------------------------------------------------------------------------

struct TokenArgs {
  Common c;
  std::vector<std::string> paths;
  std::string dtype;  // "": from the .npy headers, else uint16
  uint64_t seq_len = 2048;
};

void run_tokens(TokenArgs a) {
  if (a.c.drop_cache_flag) a.c.drop_cache = a.paths;
  TokenInput in;
  in.paths = a.paths;
  in.seq_len = a.seq_len;
  if (!a.dtype.empty()) {
    in.dtype = parse_dtype(a.dtype);
    if (in.dtype != DType::U16 && in.dtype != DType::U32)
      throw Error("--dtype", "unknown token dtype '" + a.dtype + "'", "use uint16 or uint32");
  }
  run_bench("tokens", {in}, a.c, {{"seq_len", a.seq_len}});
}

}  // namespace

const Command bench_command(40, [](CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Measure the loader on a dataset (images, tokens)");
  bench->require_subcommand(1);

  auto ia = std::make_shared<ImageArgs>();
  CLI::App* img = bench->add_subcommand(
      "images", "JPEG/PNG pipeline: RandomResizedCrop + flip + normalize (or --eval), batched");
  img->add_option("DIR", ia->paths,
                  "Image folder (ImageNet layout), or tar shards (.tar, .tar.gz, .tar.zst) / "
                  "folders of them")
      ->required();
  add_common(img, ia->c, 64);
  img->add_flag("--stream", ia->stream,
                "Stream the tar shards: whole shards in 4 MiB reads through a shuffle buffer "
                "(default: the profile's Stream; always for compressed shards)");
  img->add_flag("--no-labels", ia->no_labels,
                "Tar shards without label members: every label is -1");
  img->add_option("--size", ia->size, "Output height and width")->capture_default_str();
  img->add_option("--dtype", ia->dtype, "float32, float16 or uint8")->capture_default_str();
  img->add_option("--layout", ia->layout, "CHW or HWC")->capture_default_str();
  img->add_flag("--eval", ia->eval,
                "Resize(size*256/224) + CenterCrop(size) instead of the train pipeline");
  img->add_flag("--limit", ia->limit,
                "Measure the per-core limits instead (one thread, files in memory)");
  img->add_option("--seconds", ia->seconds, "With --limit: seconds per measurement")
      ->capture_default_str();
  img->callback([ia] { run_images(*ia); });

  auto ta = std::make_shared<TokenArgs>();
  CLI::App* tok = bench->add_subcommand("tokens", "Token windows of seq_len+1 from token files");
  tok->add_option("FILE", ta->paths,
                  "Token files (flat uint16/uint32, or 1-D .npy) or folders of them: one set")
      ->required();
  add_common(tok, ta->c, 16);
  tok->add_option("--seq-len", ta->seq_len, "Tokens per window (+1 for the targets)")
      ->capture_default_str();
  tok->add_option("--dtype", ta->dtype,
                  "uint16 or uint32 (default: the .npy headers', else uint16)");
  tok->callback([ta] { run_tokens(*ta); });
});

}  // namespace stoker::cli
