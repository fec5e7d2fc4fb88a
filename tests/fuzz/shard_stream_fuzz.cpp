// Compressed shards, which only stream: the input as a .tar.gz and as a .tar.zst (its
// magic bytes say which one really decodes), read from start to end.
#include <cstdlib>

#include "shard_reads.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("STOKER_CACHE_DIR", "none", 1);  // the shard summary cache writes under $HOME
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  for (const char* name : {"shard.tar.gz", "shard.tar.zst"})
    fuzz::read_every_sample(fuzz::write_input(name, {data, size}), {true, true});
  return 0;
}
