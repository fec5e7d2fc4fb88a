# STOKER_FUZZ=ON: the fuzz build (scripts/test.sh's build-fuzz/, scripts/fuzz.sh). Fails
# at configure time, saying what to install, when the compiler is not clang or has no
# libFuzzer (Debian: clang-14 and libclang-rt-14-dev, scripts/install-deps.sh).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "STOKER_FUZZ needs clang (libFuzzer): configure with "
                      "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
endif()
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
check_cxx_source_compiles("
  #include <cstddef>
  #include <cstdint>
  extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }"
  STOKER_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT STOKER_HAVE_LIBFUZZER)
  message(FATAL_ERROR "STOKER_FUZZ: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer "
                      "(Debian: apt-get install libclang-rt-14-dev)")
endif()
# Every object gets libFuzzer's coverage hooks and ASan+UBSan; only the fuzz targets link
# libFuzzer's main (-fsanitize=fuzzer, tests/fuzz/CMakeLists.txt).
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                    -fno-sanitize-recover=all)
add_link_options(-fsanitize=address,undefined)
