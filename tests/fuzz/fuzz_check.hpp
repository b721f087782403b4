// What every fuzz target shares: an invariant check that aborts with a message (libFuzzer and
// the replay test both treat an abort as a failure, and the message says which invariant broke).
#pragma once

#include <cstdio>
#include <cstdlib>

#define SS_FUZZ_CHECK(cond, what)                                                         \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s (%s)\n", __FILE__, __LINE__, \
                   #cond, what);                                                          \
      std::abort();                                                                       \
    }                                                                                     \
  } while (false)
