// Sampler state text (SamplerState::parse, what a checkpoint holds): a state it accepts
// prints back to text that parses to the same state, and restoring it on a sampler of its
// own dataset either works or throws stoker::Error.
#include "fuzz_support.hpp"
#include "stoker/distributed/sampler.hpp"

namespace {

bool same(const stoker::SamplerState& a, const stoker::SamplerState& b) {
  return a.version == b.version && a.seed == b.seed && a.epoch == b.epoch &&
         a.consumed == b.consumed && a.size == b.size && a.fingerprint == b.fingerprint &&
         a.shuffle == b.shuffle && a.block == b.block && a.group == b.group &&
         a.stream == b.stream && a.buffer == b.buffer && a.phases == b.phases;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  fuzz::expect_clean([&] {
    const SamplerState state = SamplerState::parse(fuzz::as_text(data, size));
    if (!same(state, SamplerState::parse(state.to_string())))
      fuzz::finding("parse(to_string(state)) is another state", state.to_string());
    // Restore on the dataset the state names (streams need their shards: left out). Sizes
    // past a million only make the permutation slower, not different.
    if (state.stream || state.size == 0 || state.size > (1u << 20)) return;
    SamplerOptions opts;
    opts.size = state.size;
    opts.seed = state.seed;
    opts.shuffle = state.shuffle;
    opts.block = state.block;
    opts.fingerprint = state.fingerprint;
    opts.world_size = 1 + state.epoch % 7;
    DistributedSampler sampler(opts);
    sampler.restore(state);
    if (sampler.length() > 0) (void)sampler.at(sampler.length() - 1);
  });
  return 0;
}
