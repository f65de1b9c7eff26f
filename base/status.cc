#include "base/status.h"

namespace rft {

Status::Status(rft_error_t code, std::string message)
    : code_(code), message_(message.empty() ? nullptr : new std::string(std::move(message))) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    std::string* copy = CopyMessage(other);
    delete message_;
    code_ = other.code_;
    message_ = copy;
  }
  return *this;
}

Status& Status::operator=(Status&& other) noexcept {
  if (this != &other) {
    delete message_;
    code_ = other.code_;
    message_ = other.message_;
    other.message_ = nullptr;
  }
  return *this;
}

std::string* Status::CopyMessage(const Status& other) {
  return other.message_ == nullptr ? nullptr : new std::string(*other.message_);
}

void Status::DeleteMessage() { delete message_; }

const std::string& Status::message() const {
  static const std::string* const kNone = new std::string();  // never destroyed: no exit order
  return message_ == nullptr ? *kNone : *message_;
}

std::string Status::ToString() const {
  std::string out = rft_error_name(code_);
  if (message_ != nullptr) {
    out += ": ";
    out += *message_;
  }
  return out;
}

Status ArgError(std::string message) { return Status(RFT_ERR_ARG, std::move(message)); }
Status TimeoutError(std::string message) { return Status(RFT_ERR_TIMEOUT, std::move(message)); }
Status OtherError(std::string message) { return Status(RFT_ERR_OTHER, std::move(message)); }
Status ProcFailedError(std::string message) {
  return Status(RFT_ERR_PROC_FAILED, std::move(message));
}
Status RevokedError(std::string message) { return Status(RFT_ERR_REVOKED, std::move(message)); }

}  // namespace rft
