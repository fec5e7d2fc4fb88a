/* Two glibc symbols that GCC 12's libstdc++.a references and glibc 2.31 lacks, for the
   builds of cmake/toolchain-bullseye.cmake. Both hidden: they never leave the binary that
   links them, and a newer glibc's own definitions serve every other library in the process.
   - __libc_single_threaded (glibc 2.32): libstdc++ skips atomic operations while it is
     non-zero. 0 says "maybe several threads": always atomic, correct, slightly slower.
   - arc4random (glibc 2.36): std::random_device's "arc4random" source. Over getrandom
     (glibc 2.25), which waits for the kernel's entropy pool once at boot; it aborts where
     the kernel has no getrandom (Linux < 3.17), as arc4random itself may not fail. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/random.h>

__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value;
  for (;;) {
    ssize_t n = getrandom(&value, sizeof value, 0);
    if (n == (ssize_t)sizeof value) return value;
    if (n < 0 && errno != EINTR) abort();
  }
}
