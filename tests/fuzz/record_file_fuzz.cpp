// Record files and their labels file: the first byte gives the record size (0 must be
// refused), the next the length of the labels file's part; every record is read.
#include "fuzz_support.hpp"
#include "stoker/sources/record_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  if (size < 2) return 0;
  const uint64_t record = data[0] % 33;
  const size_t label_bytes = std::min<size_t>(data[1], size - 2);
  const std::string records =
      fuzz::write_input("records.bin", {data + 2 + label_bytes, size - 2 - label_bytes});
  const std::string labels = fuzz::write_input("labels.bin", {data + 2, label_bytes});
  for (const std::string& labels_path : {std::string(), labels}) {
    fuzz::expect_clean([&] {
      const RecordFileSource source(records, record, labels_path);
      std::vector<std::byte> scratch;
      for (uint64_t i = 0; i < source.size(); ++i) (void)source.read(i, scratch);
      (void)source.location(source.size() - 1);
      (void)source.fingerprint();
    });
  }
  return 0;
}
