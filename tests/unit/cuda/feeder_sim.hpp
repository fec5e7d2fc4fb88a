// The device feeder's core on the simulated engine (sim_engine.hpp): a token loader whose
// batches can be told apart, the feeder core fed from it, and the documented consumer
// pattern (wait_on(s), a kernel on s, release, no host wait) with each kernel archiving the
// device bytes it read, as the GPU tests' device-to-device archive copies do.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "../loader/loader_fixture.hpp"
#include "cuda/feeder_core.hpp"
#include "sim_engine.hpp"

namespace stoker::test {

using std::chrono::microseconds;

struct FeederSim {
  static constexpr uint64_t kSeq = 255;  // 256 tokens a window: 512 bytes a sample
  static constexpr size_t kBatch = 8;
  static constexpr int kDepth = 2;

  TempDir dir;
  std::shared_ptr<TokenFileSource> source;
  LoaderOptions options;
  std::unique_ptr<Loader> loader;
  std::shared_ptr<SimEngine> engine;
  std::shared_ptr<FeederCore> core;
  CopyEngine::Stream consumer = nullptr;  // the consumer's non-blocking stream
  std::mutex mu;
  std::map<uint64_t, std::vector<std::byte>> archive;  // batch number -> bytes a kernel read

  explicit FeederSim(uint64_t batches, microseconds copy_time = microseconds(3000))
      : source(std::make_shared<TokenFileSource>(write_tokens(dir, batches * kBatch * kSeq + 1),
                                                 kSeq)),
        options(test_options(kBatch, 2, 4)),
        engine(std::make_shared<SimEngine>(copy_time)) {
    options.held_batches = kDepth + 1;  // as the feeder's users set it
    loader = make_loader();
    core = std::make_shared<FeederCore>(engine, identity(), true, source->spec());
    consumer = engine->create_stream();
  }
  static FeederStats identity() {
    FeederStats id;
    id.gpu = "sim";
    id.device = 0;
    id.depth = kDepth;
    return id;
  }
  ~FeederSim() {
    engine->synchronize_device();  // no kernel left to read what the core frees
    core.reset();
    loader.reset();
  }

  std::unique_ptr<Loader> make_loader() const {
    return std::make_unique<Loader>(source, std::make_shared<CopyTransform>(source->spec()),
                                    options);
  }

  // What each batch of epoch 0 must hold: the same loader's batches, read on the host.
  std::map<uint64_t, std::vector<std::byte>> expected() const {
    std::map<uint64_t, std::vector<std::byte>> out;
    auto reference = make_loader();
    for (Batch& b : *reference) out[b.number()] = {b.data(), b.data() + b.bytes()};
    return out;
  }

  // The consumer's step on a handed-out batch: its kernel on `consumer` waits for the copy,
  // runs `kernel_time` and archives the bytes it read at its end.
  void step(const HandedBatch& h, microseconds kernel_time) {
    core->wait_on(h.buffer, consumer);
    const size_t bytes = h.size * h.spec->bytes();
    engine->launch(consumer, kernel_time, [this, h, bytes] {
      std::vector<std::byte> read = engine->read(h.data, bytes);
      std::lock_guard lock(mu);
      archive[h.number] = std::move(read);
    });
  }

  // One epoch in the documented pattern; release() is given the consumer's stream, or
  // nothing (nullptr).
  uint64_t epoch(microseconds kernel_time, bool release_on_consumer) {
    uint64_t n = 0;
    loader->start_epoch();
    while (std::optional<HandedBatch> h = core->next(*loader)) {
      step(*h, kernel_time);
      core->release(h->buffer, release_on_consumer ? consumer : nullptr);
      ++n;
    }
    engine->synchronize_device();
    return n;
  }

  // Every batch the kernels read is the batch the loader made, byte for byte.
  void expect_archive_intact() {
    const auto want = expected();
    std::lock_guard lock(mu);
    ASSERT_EQ(archive.size(), want.size());
    int wrong = 0;
    for (const auto& [number, bytes] : want) {
      if (archive[number] != bytes && wrong++ < 3) {
        ADD_FAILURE() << "batch " << number << " on the device is not the batch the loader "
                      << "made (its host slot was refilled while a copy still read it, or "
                      << "its buffer overwritten while a kernel still read it)";
      }
    }
    EXPECT_EQ(wrong, 0) << "of " << want.size() << " batches";
  }
};

}  // namespace stoker::test
