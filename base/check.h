// Invariant checks that stay on in optimized builds.
//
// A failed RFT_CHECK is a bug in rft or a misuse of an internal API (never a bad user value,
// which is a Status): it prints the condition, the place and a message, then aborts so that a
// core dump or the sanitizer shows the stack.
#ifndef RFT_BASE_CHECK_H_
#define RFT_BASE_CHECK_H_

namespace rft::internal {

// Writes "rft: check failed at file:line: cond: message" to stderr and aborts.
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition,
                              const char* message);

}  // namespace rft::internal

#define RFT_CHECK(cond, message)                                          \
  do {                                                                    \
    if (__builtin_expect(!(cond), 0)) {                                   \
      ::rft::internal::CheckFailed(__FILE__, __LINE__, #cond, (message)); \
    }                                                                     \
  } while (0)

// Debug-only variant for checks on a hot path.
#ifdef NDEBUG
#define RFT_DCHECK(cond, message) \
  do {                            \
    (void)sizeof(!(cond));        \
  } while (0)
#else
#define RFT_DCHECK(cond, message) RFT_CHECK(cond, message)
#endif

#endif  // RFT_BASE_CHECK_H_
