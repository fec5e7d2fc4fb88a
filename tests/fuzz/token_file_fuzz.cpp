// Token files: the input as a raw uint16 file, a raw uint32 file and a .npy file (its
// header says the type), each with a sequence length from the first byte; every window
// is read.
#include "fuzz_support.hpp"
#include "stoker/sources/token_source.hpp"

namespace {

void read_all(const stoker::Source& source) {
  std::vector<std::byte> scratch;
  for (uint64_t i = 0; i < source.size(); ++i) (void)source.read(i, scratch);
  (void)source.location(source.size() - 1);
  (void)source.fingerprint();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  if (size < 1) return 0;
  const uint64_t seq_len = data[0] % 9;  // 0 must be refused too
  const std::span<const uint8_t> body(data + 1, size - 1);
  const std::string raw = fuzz::write_input("tokens.bin", body);
  const std::string npy = fuzz::write_input("tokens.npy", body);
  for (DType dtype : {DType::U16, DType::U32, DType::U8})
    fuzz::expect_clean([&] { read_all(TokenFileSource(raw, seq_len, dtype)); });
  fuzz::expect_clean([&] { read_all(TokenFileSource({npy}, seq_len)); });
  fuzz::expect_clean([&] { read_all(TokenFileSource({raw, npy}, seq_len)); });
  return 0;
}
