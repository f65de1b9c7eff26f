// Completion calls of the data plane: Test, Wait and their all/any forms, and the progress
// loop they share (spinning in poll mode; sleeping on UCX's event fd in block mode).
#include <string>

#include "transport/dataplane/data_plane.h"

namespace rft::transport {
namespace {

// A non-OK Status for a failed request; the message names the operation (built on the error
// path only: a successful completion allocates nothing, and out of line, so that the
// completion calls' frames hold no strings).
[[gnu::cold, gnu::noinline]] Status RequestError(const Request& request) {
  const MessageStatus& s = request.status;
  std::string what =
      request.kind == RequestKind::kSend
          ? "send to rank " + std::to_string(request.peer)
          : "receive from " + (s.source == kAnySource ? std::string("ANY_SOURCE")
                                                      : "rank " + std::to_string(s.source));
  what +=
      " (tag " + std::to_string(s.tag) + ", context " + std::to_string(request.context_id) + ")";
  switch (s.error) {
    case RFT_ERR_PROC_FAILED:
      return Status(s.error, what + ": the peer failed");
    case RFT_ERR_TRUNCATE:
      return Status(s.error, what + ": message of " + std::to_string(s.message_length) +
                                 " bytes truncated to the buffer's " + std::to_string(s.count));
    default:
      return Status(s.error, what + ": " + rft_error_string(s.error));
  }
}

bool IsDone(const Request* request) { return request == nullptr || request->complete; }

}  // namespace

template <class Ready>
Status DataPlane::WaitUntil(Ready&& ready, Deadline deadline, const char* what) {
  const bool bounded = !(deadline == Deadline::Never());
  while (!ready()) {
    const unsigned events = Progress();
    if (ready()) break;
    if (bounded && deadline.expired()) {
      // Built out of line (ColdError), so that no std::string sits in the wait loop's frame.
      return ColdError(RFT_ERR_TIMEOUT, [what] {
        return std::string(what) + ": the deadline passed before completion";
      });
    }
    if (events == 0 && options_.progress == ProgressMode::kBlock) {
      // Sleep in slices so a deadline is noticed; failure reports wake the sleep at once.
      const int slice_ms = bounded ? std::min(deadline.remaining_ms_for_poll(), 100) : 100;
      RFT_RETURN_IF_ERROR(Idle(slice_ms));
    }
  }
  return Status::Ok();
}

// Inline into the completion calls below (every completed message passes through both).
[[gnu::always_inline]] inline void DataPlane::ReleaseRequest(Request** handle,
                                                             MessageStatus* status) {
  Request* request = *handle;
  if (status != nullptr) *status = request->status;
  *handle = nullptr;
  if (request->ucx_request != nullptr) {
    request->orphaned = true;  // UCX still holds it (failed peer): its callback releases it
    return;
  }
  requests_.Release(request);
}

// Inline into the completion calls below: a wait's last step on every message's path.
[[gnu::always_inline]] inline Status DataPlane::Finish(Request** handle, MessageStatus* status) {
  Status result = (*handle)->status.error == RFT_SUCCESS ? Status() : RequestError(**handle);
  ReleaseRequest(handle, status);
  return result;
}

namespace {

bool AllDone(std::span<Request* const> requests) {
  for (const Request* r : requests) {
    if (!IsDone(r)) return false;
  }
  return true;
}

// The position of the first completed request, or DataPlane::kNoIndex.
size_t FirstComplete(std::span<Request* const> requests) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] != nullptr && requests[i]->complete) return i;
  }
  return DataPlane::kNoIndex;
}

bool AllNull(std::span<Request* const> requests) {
  for (const Request* r : requests) {
    if (r != nullptr) return false;
  }
  return true;
}

// MPI's empty status, for a null handle.
void ClearStatus(MessageStatus* status) {
  if (status != nullptr) *status = MessageStatus();
}

Status CheckStatuses(size_t requests, size_t statuses) {
  if (statuses != 0 && statuses < requests) {
    return ArgError(std::to_string(requests) + " requests but room for " +
                    std::to_string(statuses) + " statuses: expected one per request (or none)");
  }
  return Status::Ok();
}

}  // namespace

Status DataPlane::Test(Request** request, bool* done, MessageStatus* status) {
  *done = true;
  if (*request == nullptr) {
    ClearStatus(status);
    return Status::Ok();
  }
  if (!(*request)->complete) Progress();
  *done = (*request)->complete;
  return *done ? Finish(request, status) : Status::Ok();
}

Status DataPlane::Wait(Request** request, MessageStatus* status, Deadline deadline) {
  Request* r = *request;
  if (r == nullptr) {
    ClearStatus(status);
    return Status::Ok();
  }
  RFT_RETURN_IF_ERROR(WaitUntil([r] { return r->complete; }, deadline, "wait"));
  return Finish(request, status);
}

Status DataPlane::Waitall(std::span<Request*> requests, std::span<MessageStatus> statuses,
                          Deadline deadline) {
  RFT_RETURN_IF_ERROR(CheckStatuses(requests.size(), statuses.size()));
  RFT_RETURN_IF_ERROR(WaitUntil([&] { return AllDone(requests); }, deadline, "waitall"));
  bool failed = false;
  for (size_t i = 0; i < requests.size(); ++i) {
    MessageStatus* status = statuses.empty() ? nullptr : &statuses[i];
    if (requests[i] == nullptr) {
      ClearStatus(status);
      continue;
    }
    failed |= requests[i]->status.error != RFT_SUCCESS;
    ReleaseRequest(&requests[i], status);
  }
  if (failed) {
    return Status(RFT_ERR_IN_STATUS, "waitall: some requests failed; their statuses say why");
  }
  return Status::Ok();
}

Status DataPlane::Testall(std::span<Request*> requests, bool* done,
                          std::span<MessageStatus> statuses) {
  RFT_RETURN_IF_ERROR(CheckStatuses(requests.size(), statuses.size()));
  *done = AllDone(requests);
  if (!*done) {
    Progress();
    *done = AllDone(requests);
  }
  if (!*done) return Status::Ok();  // MPI: nothing is released unless everything completed
  return Waitall(requests, statuses, Deadline::Never());
}

Status DataPlane::Waitany(std::span<Request*> requests, size_t* index, MessageStatus* status,
                          Deadline deadline) {
  *index = kNoIndex;
  if (AllNull(requests)) {
    ClearStatus(status);
    return Status::Ok();
  }
  RFT_RETURN_IF_ERROR(WaitUntil([&] { return (*index = FirstComplete(requests)) != kNoIndex; },
                                deadline, "waitany"));
  return Finish(&requests[*index], status);
}

Status DataPlane::Testany(std::span<Request*> requests, size_t* index, bool* done,
                          MessageStatus* status) {
  *done = true;
  *index = kNoIndex;
  if (AllNull(requests)) {
    ClearStatus(status);
    return Status::Ok();
  }
  *index = FirstComplete(requests);
  if (*index == kNoIndex) {
    Progress();
    *index = FirstComplete(requests);
  }
  *done = *index != kNoIndex;
  return *done ? Finish(&requests[*index], status) : Status::Ok();
}

Status DataPlane::Probe(Rank source, int32_t tag, uint32_t context_id, MessageStatus* status,
                        Deadline deadline) {
  RFT_RETURN_IF_ERROR(CheckSourceAndTag("probe", source, tag));
  RFT_RETURN_IF_ERROR(WaitUntil(
      [&] {
        return FindArrived(source, tag, context_id) != nullptr ||
               (source != kAnySource && endpoints_->failed(source)) || IsRevoked(context_id);
      },
      deadline, "probe"));
  bool found = false;
  RFT_RETURN_IF_ERROR(Iprobe(source, tag, context_id, &found, status));  // fills the status
  if (!found) {
    return ProcFailedError("probe for a message from rank " + std::to_string(source) +
                           ": the rank failed");
  }
  return Status::Ok();
}

}  // namespace rft::transport
