// Property checks for the fuzz targets in fuzz/.
//
// A violated property must stop the fuzzer with a reproducer, exactly like a sanitizer report, so
// FUZZ_CHECK prints what broke and traps: libFuzzer then saves the input as crash-<sha1>. A plain
// assert() would vanish under -DNDEBUG, and RFT_CHECK belongs to the code under test.
#ifndef RFT_FUZZ_FUZZ_CHECK_H_
#define RFT_FUZZ_FUZZ_CHECK_H_

#include <cstdio>

#define FUZZ_CHECK(cond)                                                                        \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "fuzz property violated at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
      __builtin_trap();                                                                         \
    }                                                                                           \
  } while (0)

#endif  // RFT_FUZZ_FUZZ_CHECK_H_
