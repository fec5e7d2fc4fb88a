// Opens one shard file as TarShardSource and reads every sample the way the loader does
// (random access: read(i); streaming: each shard's cursor from start to end): shared by
// the plain tar and the compressed shard targets.
#pragma once

#include <string>

#include "fuzz_support.hpp"
#include "stoker/sources/tar_source.hpp"

namespace stoker::fuzz {

inline void read_every_sample(const std::string& shard, TarShardOptions options) {
  expect_clean([&] {
    const TarShardSource source({shard}, options);
    std::vector<std::byte> scratch;
    if (options.stream) {
      for (uint32_t s = 0; s < source.shard_samples().size(); ++s) {
        auto cursor = source.open_shard(s);
        int64_t label = 0;
        uint64_t n = 0;
        while (cursor->next(&scratch, label)) ++n;
        if (n != source.shard_samples()[s])
          finding("a shard streamed another count than it was counted with", shard);
      }
    } else {
      for (uint64_t i = 0; i < source.size(); ++i) (void)source.read(i, scratch);
    }
    (void)source.location(source.size() - 1);
    (void)source.describe();
  });
}

}  // namespace stoker::fuzz
