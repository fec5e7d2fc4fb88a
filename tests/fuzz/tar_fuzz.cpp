// Plain tar shards (ustar, pax and GNU headers, long names, WebDataset keys and labels):
// the same bytes read for random access, then as a stream, with and without labels.
#include <cstdlib>

#include "shard_reads.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("STOKER_CACHE_DIR", "none", 1);  // the shard summary cache writes under $HOME
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  const std::string shard = fuzz::write_input("shard.tar", {data, size});
  for (bool stream : {false, true})
    for (bool labels : {true, false}) fuzz::read_every_sample(shard, {labels, stream});
  return 0;
}
