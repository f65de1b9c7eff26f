// rft::Status carries an error class and a message that names what was wrong; StatusOr<T>
// carries a value or such an error. rft does not throw: every failure path returns one of these.
//
// An OK status holds no message and never allocates. Error messages name the offending value,
// e.g. `RFT_PMIX_TIMEOUT="fast": expected a duration such as 500ms or 10s`.
#ifndef RFT_BASE_STATUS_H_
#define RFT_BASE_STATUS_H_

#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "base/check.h"
#include "base/error.h"

namespace rft {

class [[nodiscard]] Status {
 public:
  // OK.
  Status() = default;
  // `code` RFT_SUCCESS gives an OK status (the message is kept but means nothing).
  Status(rft_error_t code, std::string message);
  Status(const Status& other) : code_(other.code_), message_(CopyMessage(other)) {}
  Status(Status&& other) noexcept : code_(other.code_), message_(other.message_) {
    other.message_ = nullptr;
  }
  Status& operator=(const Status& other);
  Status& operator=(Status&& other) noexcept;
  ~Status() {
    if (message_ != nullptr) [[unlikely]]
      DeleteMessage();
  }

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == RFT_SUCCESS; }
  rft_error_t code() const { return code_; }
  const std::string& message() const;

  // "RFT_ERR_ARG: <message>", or just the code name when there is no message ("RFT_SUCCESS"
  // for OK).
  std::string ToString() const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message() == b.message();
  }

 private:
  static std::string* CopyMessage(const Status& other);
  void DeleteMessage();

  rft_error_t code_ = RFT_SUCCESS;
  // On the heap and null without a message, so that an OK status is two words that every call
  // on the hot path makes and drops with a store and a test (a std::string here cost the 8-byte
  // round trip its construction and destruction in every call that returned a Status, and put
  // a stack-protector canary into each of those frames for the string's inline buffer).
  std::string* message_ = nullptr;
};

// Convenience constructors for the common error classes.
Status ArgError(std::string message);
Status TimeoutError(std::string message);
Status OtherError(std::string message);
Status ProcFailedError(std::string message);
Status RevokedError(std::string message);

// An error whose message `build` (a callable returning the std::string) makes in a cold function
// of its own: for the fast path's error returns, whose callers then hold no std::string in their
// frames. A string temporary there costs every call its register saves and a stack-protector
// check, error or not. Use as `return ColdError(RFT_ERR_OTHER, [&] { return "..." + ...; });`.
template <class Build>
[[gnu::cold, gnu::noinline]] Status ColdError(rft_error_t code, Build&& build) {
  return Status(code, std::forward<Build>(build)());
}

// Returns from the enclosing function (which must return Status or StatusOr) if `expr` is not OK.
#define RFT_RETURN_IF_ERROR(expr)                \
  do {                                           \
    ::rft::Status rft_status_internal_ = (expr); \
    if (!rft_status_internal_.ok()) {            \
      return rft_status_internal_;               \
    }                                            \
  } while (0)

// Either a T or a non-OK Status. Accessing the value of an error is a bug and aborts (also in
// optimized builds: the check is one predictable branch).
template <class T>
class [[nodiscard]] StatusOr {
  static_assert(!std::is_same_v<std::remove_cv_t<T>, Status>, "StatusOr<Status> is meaningless");
  static_assert(!std::is_reference_v<T>, "StatusOr<T&> is not supported");

 public:
  // Implicit on purpose, so that `return value;` and `return ArgError(...);` both work.
  template <class U = T,
            class = std::enable_if_t<std::is_constructible_v<T, U&&> &&
                                     !std::is_same_v<std::remove_cvref_t<U>, StatusOr> &&
                                     !std::is_convertible_v<U&&, Status>>>
  StatusOr(U&& value) : has_value_(true) {  // NOLINT
    new (&value_) T(std::forward<U>(value));
  }
  // `status` must not be OK; an OK status is turned into RFT_ERR_OTHER so the mistake shows.
  StatusOr(Status status) : status_(std::move(status)), has_value_(false) {  // NOLINT
    if (status_.ok()) status_ = Status(RFT_ERR_OTHER, "StatusOr constructed from an OK Status");
  }

  StatusOr(const StatusOr& other) : status_(other.status_), has_value_(other.has_value_) {
    if (has_value_) new (&value_) T(other.value_);
  }
  StatusOr(StatusOr&& other) noexcept(std::is_nothrow_move_constructible_v<T>)
      : status_(std::move(other.status_)), has_value_(other.has_value_) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  StatusOr& operator=(const StatusOr& other) {
    if (this != &other) Assign(other);
    return *this;
  }
  StatusOr& operator=(StatusOr&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) Assign(std::move(other));
    return *this;
  }
  ~StatusOr() { Reset(); }

  bool ok() const { return has_value_; }
  // OK when a value is held.
  const Status& status() const { return status_; }

  const T& value() const& {
    CheckHasValue();
    return value_;
  }
  T& value() & {
    CheckHasValue();
    return value_;
  }
  T&& value() && {
    CheckHasValue();
    return std::move(value_);
  }
  template <class U>
  T value_or(U&& fallback) const& {
    return has_value_ ? value_ : static_cast<T>(std::forward<U>(fallback));
  }

  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  void CheckHasValue() const { RFT_CHECK(has_value_, status_.ToString().c_str()); }

  void Reset() {
    if (has_value_) value_.~T();
    has_value_ = false;
  }

  template <class Other>
  void Assign(Other&& other) {
    Reset();
    status_ = std::forward<Other>(other).status_;
    if (other.has_value_) {
      new (&value_) T(std::forward<Other>(other).value_);
      has_value_ = true;
    }
  }

  Status status_;
  bool has_value_;
  // A union so T needs no default constructor and an error holds no T.
  union {
    T value_;
  };
};

}  // namespace rft

// Evaluates `expr` (a StatusOr); on an error returns its status from the enclosing function
// (which must return Status or StatusOr), else moves the value into `lhs`: an existing variable
// or a declaration (`auto value`). Not for use as the body of an unbraced if or loop.
#define RFT_ASSIGN_OR_RETURN(lhs, expr) \
  RFT_ASSIGN_OR_RETURN_IMPL_(RFT_STATUS_CONCAT_(rft_statusor_internal_, __LINE__), lhs, expr)
#define RFT_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                               \
  if (!statusor.ok()) return statusor.status();         \
  lhs = std::move(statusor).value()
#define RFT_STATUS_CONCAT_(a, b) RFT_STATUS_CONCAT_INNER_(a, b)
#define RFT_STATUS_CONCAT_INNER_(a, b) a##b

#endif  // RFT_BASE_STATUS_H_
