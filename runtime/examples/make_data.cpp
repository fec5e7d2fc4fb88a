// stoker_make_data: small learnable datasets for the trainer, its tests and the templates.
//
//   stoker_make_data images DIR [--classes 4] [--per-class 100] [--width 96 --height 72]
//   stoker_make_data tokens FILE [--tokens 200000] [--classes 16] [--segment 256]
//
// images: class c's JPEGs are noisy pictures around a colour of its own, so the class is
//         learnable from pixels (and survives random crops and flips).
// tokens: uint16 ids in segments of one "topic" k each, every id = k (mod classes): the
//         next token's class is predictable from the bag of previous tokens.
// Deterministic (fixed seed); an existing output is replaced.
#include <turbojpeg.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

namespace {

int make_images(const std::string& dir, int classes, int per_class, int width, int height) {
  namespace fs = std::filesystem;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> noise(-40, 40);
  tjhandle tj = tjInitCompress();
  if (!tj) {
    std::fprintf(stderr, "stoker_make_data: tjInitCompress failed\n");
    return 1;
  }
  std::vector<unsigned char> rgb(static_cast<size_t>(width) * height * 3);
  for (int c = 0; c < classes; ++c) {
    const fs::path folder = fs::path(dir) / ("class" + std::to_string(c));
    fs::create_directories(folder);
    // Class colours spread around the hue circle.
    const int base[3] = {(c * 97) % 256, (c * 53 + 128) % 256, (c * 181 + 64) % 256};
    for (int i = 0; i < per_class; ++i) {
      for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
          for (int ch = 0; ch < 3; ++ch) {
            const int gradient = (ch == 0 ? x : y) * 32 / width;
            const int v = base[ch] + gradient + noise(rng);
            rgb[(static_cast<size_t>(y) * width + x) * 3 + ch] =
                static_cast<unsigned char>(std::clamp(v, 0, 255));
          }
        }
      }
      unsigned char* jpeg = nullptr;
      unsigned long size = 0;
      if (tjCompress2(tj, rgb.data(), width, 0, height, TJPF_RGB, &jpeg, &size, TJSAMP_420, 90,
                      0) != 0) {
        std::fprintf(stderr, "stoker_make_data: tjCompress2: %s\n", tjGetErrorStr2(tj));
        tjDestroy(tj);
        return 1;
      }
      char name[32];
      std::snprintf(name, sizeof name, "%05d.jpg", i);
      std::ofstream(folder / name, std::ios::binary)
          .write(reinterpret_cast<const char*>(jpeg), static_cast<std::streamsize>(size));
      tjFree(jpeg);
    }
  }
  tjDestroy(tj);
  std::printf("stoker_make_data: %d images in %d classes under %s\n", classes * per_class, classes,
              dir.c_str());
  return 0;
}

int make_tokens(const std::string& file, uint64_t tokens, int classes, int segment) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> topic(0, classes - 1);
  std::uniform_int_distribution<int> word(0, 65535 / classes - 1);
  std::vector<uint16_t> v(tokens);
  int k = 0;
  for (uint64_t t = 0; t < tokens; ++t) {
    if (t % segment == 0) k = topic(rng);
    v[t] = static_cast<uint16_t>(word(rng) * classes + k);
  }
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(v.data()),
             static_cast<std::streamsize>(v.size() * sizeof(uint16_t)));
  std::printf("stoker_make_data: %llu uint16 tokens in %s\n",
              static_cast<unsigned long long>(tokens), file.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stoker_make_data: small learnable datasets for stoker_train"};
  app.require_subcommand(1);
  std::string out;
  int classes = 4, per_class = 100, width = 96, height = 72, segment = 256;
  uint64_t tokens = 200000;
  CLI::App* images = app.add_subcommand("images", "an image folder of JPEGs");
  images->add_option("dir", out, "output folder")->required();
  images->add_option("--classes", classes)->capture_default_str()->check(CLI::Range(2, 1000));
  images->add_option("--per-class", per_class)
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  images->add_option("--width", width)->capture_default_str()->check(CLI::Range(8, 4096));
  images->add_option("--height", height)->capture_default_str()->check(CLI::Range(8, 4096));
  CLI::App* tok = app.add_subcommand("tokens", "a uint16 token file");
  tok->add_option("file", out, "output file")->required();
  tok->add_option("--tokens", tokens)->capture_default_str()->check(CLI::Range(2, 1 << 30));
  tok->add_option("--classes", classes)->capture_default_str()->check(CLI::Range(2, 4096));
  tok->add_option("--segment", segment)->capture_default_str()->check(CLI::Range(1, 1 << 20));
  CLI11_PARSE(app, argc, argv);
  if (images->parsed()) return make_images(out, classes, per_class, width, height);
  return make_tokens(out, tokens, classes, segment);
}
