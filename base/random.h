// Unpredictable random numbers from the kernel (getrandom), for secrets and names that another
// user on the node must not be able to guess: job tokens, shared-memory segment names.
// Not for simulations or tests that need a seed: those use a seeded generator.
#ifndef RFT_BASE_RANDOM_H_
#define RFT_BASE_RANDOM_H_

#include <cstdint>

#include "base/status.h"

namespace rft {

// 64 random bits; RFT_ERR_OTHER naming the system error if the kernel has none to give (never
// blocks for long: getrandom waits only until the pool is initialised at boot).
StatusOr<uint64_t> SecureRandom64();

}  // namespace rft

#endif  // RFT_BASE_RANDOM_H_
