// The session's point-to-point calls, with ULFM's rules for ANY_SOURCE receives after a failure,
// and the completion of every request (point-to-point and collective): wait, test and their
// all/any forms, and cancel.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/log.h"
#include "ulfm_api/session.h"

namespace rft::api {

using transport::kAnySource;
using transport::MessageStatus;

// ---- Point-to-point ----

Status Session::SendArgError(const Communicator& comm, int dest, int tag) {
  RFT_RETURN_IF_ERROR(comm.CheckPeer("send to", dest));
  return Communicator::CheckTag("send", tag, false);
}

Status Session::ReceiveArgError(const Communicator& comm, int source, int tag) {
  RFT_RETURN_IF_ERROR(comm.CheckSource("receive from", source));
  return Communicator::CheckTag("receive", tag, true);
}

Status Session::PostSend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag,
                         transport::Request** inner, transport::SendMode mode) {
  if (!comm.SendArgsOk(dest, tag)) [[unlikely]]
    return SendArgError(comm, dest, tag);
  return plane().Isend(buffer, bytes, comm.PeerJobRank(static_cast<Rank>(dest)), tag,
                       comm.p2p_context(), inner, mode);
}

Status Session::PostReceive(Communicator& comm, void* buffer, size_t capacity, int source, int tag,
                            transport::Request** inner) {
  if (!comm.ReceiveArgsOk(source, tag)) [[unlikely]]
    return ReceiveArgError(comm, source, tag);
  return plane().Irecv(buffer, capacity,
                       source < 0 ? kAnySource : comm.PeerJobRank(static_cast<Rank>(source)), tag,
                       comm.p2p_context(), inner);
}

Status Session::Isend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag,
                      Request** request, transport::SendMode mode) {
  transport::Request* inner = nullptr;
  RFT_RETURN_IF_ERROR(PostSend(comm, buffer, bytes, dest, tag, &inner, mode));
  *request = NewRequest(comm, inner, false);
  return Status::Ok();
}

Status Session::Irecv(Communicator& comm, void* buffer, size_t capacity, int source, int tag,
                      Request** request) {
  transport::Request* inner = nullptr;
  RFT_RETURN_IF_ERROR(PostReceive(comm, buffer, capacity, source, tag, &inner));
  *request = NewRequest(comm, inner, source < 0);
  return Status::Ok();
}

bool Session::TrySend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag) {
  return comm.SendArgsOk(dest, tag) &&
         plane().SendNow(buffer, bytes, comm.PeerJobRank(static_cast<Rank>(dest)), tag,
                         comm.p2p_context());
}

// The blocking forms use the data plane's requests directly: no API request to take and give
// back per message.
Status Session::Send(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag) {
  // A small message usually leaves at once, with no request at all (the data plane's fast path).
  if (TrySend(comm, buffer, bytes, dest, tag)) [[likely]]
    return Status::Ok();
  transport::Request* inner = nullptr;
  RFT_RETURN_IF_ERROR(PostSend(comm, buffer, bytes, dest, tag, &inner));
  return WaitInner(comm, &inner, nullptr, false);
}

Status Session::Ssend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag) {
  transport::Request* inner = nullptr;
  RFT_RETURN_IF_ERROR(
      PostSend(comm, buffer, bytes, dest, tag, &inner, transport::SendMode::kSynchronous));
  return WaitInner(comm, &inner, nullptr, false);
}

Status Session::Recv(Communicator& comm, void* buffer, size_t capacity, int source, int tag,
                     MessageStatus* status) {
  transport::Request* inner = nullptr;
  RFT_RETURN_IF_ERROR(PostReceive(comm, buffer, capacity, source, tag, &inner));
  return FinishBlockingReceive(comm, &inner, status, source < 0);
}

Status Session::Sendrecv(Communicator& comm, const void* send, size_t send_bytes, int dest,
                         int send_tag, void* receive, size_t capacity, int source, int receive_tag,
                         MessageStatus* status) {
  // The send's arguments first: a receive posted for a send that never starts could wait forever.
  if (!comm.SendArgsOk(dest, send_tag)) [[unlikely]]
    return SendArgError(comm, dest, send_tag);
  transport::Request* receiving = nullptr;
  RFT_RETURN_IF_ERROR(PostReceive(comm, receive, capacity, source, receive_tag, &receiving));
  transport::Request* sending = nullptr;
  Status sent = PostSend(comm, send, send_bytes, dest, send_tag, &sending);
  if (!sent.ok()) {
    (void)plane().Cancel(receiving);
    (void)WaitInner(comm, &receiving, status, false);
    return sent;
  }
  sent = WaitInner(comm, &sending, nullptr, false);
  Status received = FinishBlockingReceive(comm, &receiving, status, source < 0);
  return sent.ok() ? received : sent;
}

Status Session::FinishBlockingReceive(Communicator& comm, transport::Request** inner,
                                      MessageStatus* status, bool any_source) {
  MessageStatus local;
  if (status == nullptr) status = &local;
  Status result = WaitInner(comm, inner, status, any_source);
  if (result.code() != RFT_ERR_PROC_FAILED_PENDING) [[likely]]
    return result;
  // No request to keep: cancel it; if it matched meanwhile, its message is the outcome.
  const std::string why = result.message();
  RFT_RETURN_IF_ERROR(plane().Cancel(*inner));
  result = WaitInner(comm, inner, status, false);
  if (status->cancelled) {
    status->error = RFT_ERR_PROC_FAILED;
    return ProcFailedError(why);
  }
  return result;
}

Status Session::Iprobe(Communicator& comm, int source, int tag, bool* found,
                       MessageStatus* status) {
  RFT_RETURN_IF_ERROR(comm.CheckSource("probe", source));
  RFT_RETURN_IF_ERROR(Communicator::CheckTag("probe", tag, true));
  const bool any = source < 0;
  MessageStatus local;
  if (status == nullptr) status = &local;
  RFT_RETURN_IF_ERROR(plane().Iprobe(any ? kAnySource : comm.PeerJobRank(static_cast<Rank>(source)),
                                     tag, comm.p2p_context(), found, status));
  if (*found) {
    status->source = comm.PeerRank(status->source);
    return Status::Ok();
  }
  // A loop of probes drives the rest too (MPI's progress rule): non-blocking collectives, freed
  // requests.
  if (HasBackgroundWork()) [[unlikely]]
    AdvanceBackground();
  // A probe keeps no request that could stay active, so, as a blocking receive, it fails.
  if (any && comm.HasUnacknowledgedFailure()) {
    return ProcFailedError(HeldWhy(comm, "probe") +
                           "; a probe keeps no request: acknowledge the failure to probe again");
  }
  return Status::Ok();
}

Status Session::Probe(Communicator& comm, int source, int tag, MessageStatus* status) {
  RFT_RETURN_IF_ERROR(comm.CheckSource("probe", source));
  RFT_RETURN_IF_ERROR(Communicator::CheckTag("probe", tag, true));
  MessageStatus local;
  if (status == nullptr) status = &local;
  if (source >= 0) {
    RFT_RETURN_IF_ERROR(plane().Probe(comm.PeerJobRank(static_cast<Rank>(source)), tag,
                                      comm.p2p_context(), status));
    status->source = comm.PeerRank(status->source);
    return Status::Ok();
  }
  for (;;) {
    bool found = false;
    RFT_RETURN_IF_ERROR(Iprobe(comm, source, tag, &found, status));
    if (found) return Status::Ok();
    ProgressOrIdle();
  }
}

// ---- Completion ----

size_t Session::ProgressOnce() {
  // What the background moved counts as progress: it may have completed what the caller waits
  // for, and the caller must look before it sleeps.
  size_t moved = 0;
  if (HasBackgroundWork()) [[unlikely]]
    moved = AdvanceBackground();
  return moved + plane().Progress();
}

void Session::ProgressOrIdle() {
  if (ProgressOnce() != 0) return;
  if (plane().options().progress == transport::ProgressMode::kBlock) {
    // Failure reports wake the sleep; the slice bounds a registry count that moved before its
    // record reached the data plane.
    (void)plane().Idle(50);
  }
}

void Session::IdleIfBlocking() {
  if (plane().options().progress == transport::ProgressMode::kBlock) {
    ProgressOrIdle();
  } else if (HasBackgroundWork()) [[unlikely]] {
    AdvanceBackground();
  }
}

std::string Session::HeldWhy(Communicator& comm, const char* what) {
  const std::vector<Rank>& failed = comm.FailedMembers();
  const Rank first = failed[comm.acknowledged()];
  return std::string(what) + " from ANY_SOURCE on " + comm.name() + ": member " +
         std::to_string(comm.MemberRank(first)) + " (job rank " + std::to_string(first) +
         ") failed and is not acknowledged";
}

Status Session::HeldError(Communicator& comm, const char* what) {
  return Status(RFT_ERR_PROC_FAILED_PENDING, HeldWhy(comm, what) + "; the request stays active");
}

Status Session::WaitInner(Communicator& comm, transport::Request** inner, MessageStatus* status,
                          bool apply_held_rule) {
  for (;;) {
    bool done = false;
    Status result = plane().Test(inner, &done, status);  // progresses when not done
    if (done) {
      Translate(comm, status);
      return result;
    }
    if (apply_held_rule && comm.HasUnacknowledgedFailure()) {
      if (status != nullptr) status->error = RFT_ERR_PROC_FAILED_PENDING;
      return HeldError(comm, "receive");
    }
    IdleIfBlocking();
  }
}

Status Session::Complete(Request** handle, MessageStatus* status, bool apply_held_rule) {
  Request* request = *handle;
  if (request == nullptr || request->collective != nullptr) {
    if (status != nullptr) *status = MessageStatus();
    if (request == nullptr) return Status::Ok();
    Status result = CompleteCollective(handle, true);
    if (status != nullptr) status->error = result.code();
    return result;
  }
  Status result =
      WaitInner(*request->comm, &request->inner, status, apply_held_rule && request->any_source);
  if (request->inner == nullptr) {  // completed: the API request goes back
    ReleaseRequest(request);
    *handle = nullptr;
  }
  return result;
}

Status Session::Release(Request** handle, MessageStatus* status, Status result) {
  Request* request = *handle;
  if (request->collective != nullptr) {
    if (status != nullptr) {
      *status = MessageStatus();
      status->error = result.code();
    }
    return CompleteCollective(handle, false);
  }
  Translate(*request->comm, status);
  ReleaseRequest(request);
  *handle = nullptr;
  return result;
}

Status Session::Wait(Request** request, MessageStatus* status) {
  return Complete(request, status, true);
}

Status Session::Test(Request** handle, bool* done, MessageStatus* status) {
  Request* request = *handle;
  if (request == nullptr) {
    *done = true;
    if (status != nullptr) *status = MessageStatus();
    return Status::Ok();
  }
  if (request->collective != nullptr) {
    if (status != nullptr) *status = MessageStatus();
    Status result = request->collective->Advance(done);
    if (*done) return Release(handle, status, std::move(result));
    return Status::Ok();
  }
  Status result = plane().Test(&request->inner, done, status);
  if (*done) return Release(handle, status, std::move(result));
  if (Held(request)) {
    if (status != nullptr) status->error = RFT_ERR_PROC_FAILED_PENDING;
    return HeldError(*request->comm, "receive");
  }
  return Status::Ok();
}

Status Session::FinishAll(std::span<Request*> requests, std::span<MessageStatus> statuses,
                          bool release_done) {
  bool failed = false;
  const Communicator* held_on = nullptr;
  for (size_t i = 0; i < requests.size(); ++i) {
    MessageStatus local;
    MessageStatus* status = i < statuses.size() ? &statuses[i] : &local;
    Request* request = requests[i];
    if (request == nullptr) {
      *status = MessageStatus();
    } else if (Finished(request) && release_done) {
      bool done = false;
      Status result = request->collective != nullptr ? request->collective->Advance(&done)
                                                     : plane().Test(&request->inner, &done, status);
      (void)Release(&requests[i], status, std::move(result));
    } else if (!Finished(request) && Held(request)) {
      *status = MessageStatus();
      status->error = RFT_ERR_PROC_FAILED_PENDING;
      held_on = request->comm;
    } else {
      *status = MessageStatus();
      status->error = RFT_ERR_PENDING;
    }
    if (status->error != RFT_SUCCESS) failed = true;
  }
  if (!failed) return Status::Ok();
  std::string why = "some requests failed; each status says its own error";
  if (held_on != nullptr) {
    why += " (ANY_SOURCE receives on " + held_on->name() +
           " are held by an unacknowledged failure and stay active)";
  }
  return Status(RFT_ERR_IN_STATUS, why);
}

Session::Survey Session::SurveyAll(std::span<Request*> requests) {
  Survey survey;
  for (Request* request : requests) {
    if (request == nullptr || Finished(request)) continue;
    survey.pending = true;
    survey.held = survey.held || Held(request);
  }
  return survey;
}

Status Session::Waitall(std::span<Request*> requests, std::span<MessageStatus> statuses) {
  // A request that finished stays finished, and a window of messages finishes mostly in order:
  // each pass looks on from the first request still pending, not from the start (which made a
  // window of n messages cost ~n^2 looks). Only an ANY_SOURCE receive can be held, so with none
  // among them no pass needs to look further.
  const bool any_source = std::any_of(requests.begin(), requests.end(), [](const Request* r) {
    return r != nullptr && r->any_source;
  });
  size_t first = 0;
  for (;;) {
    while (first < requests.size() && (requests[first] == nullptr || Finished(requests[first]))) {
      ++first;
    }
    if (first == requests.size()) return FinishAll(requests, statuses, true);
    if (any_source && SurveyAll(requests.subspan(first)).held) {
      return FinishAll(requests, statuses, true);
    }
    ProgressOrIdle();
  }
}

Status Session::Testall(std::span<Request*> requests, bool* done,
                        std::span<MessageStatus> statuses) {
  (void)ProgressOnce();
  const Survey survey = SurveyAll(requests);
  *done = !survey.pending;
  if (!survey.pending) return FinishAll(requests, statuses, true);
  // Nothing is released unless everything is done (MPI's Testall); a held receive is reported.
  if (survey.held) return FinishAll(requests, statuses, false);
  return Status::Ok();
}

bool Session::TakeAny(std::span<Request*> requests, size_t* index, MessageStatus* status,
                      Status* result) {
  *index = kNoIndex;
  size_t held = kNoIndex;
  for (size_t i = 0; i < requests.size(); ++i) {
    Request* request = requests[i];
    if (request == nullptr) continue;
    if (Finished(request)) {
      *index = i;
      *result = Wait(&requests[i], status);
      return true;
    }
    if (held == kNoIndex && Held(request)) held = i;
    *index = i;  // something is pending
  }
  if (*index == kNoIndex) {
    if (status != nullptr) *status = MessageStatus();
    *result = Status::Ok();
    return true;
  }
  if (held != kNoIndex) {
    *index = held;
    if (status != nullptr) status->error = RFT_ERR_PROC_FAILED_PENDING;
    *result = HeldError(*requests[held]->comm, "receive");
    return true;
  }
  return false;
}

Status Session::Waitany(std::span<Request*> requests, size_t* index, MessageStatus* status) {
  Status result;
  while (!TakeAny(requests, index, status, &result)) ProgressOrIdle();
  return result;
}

Status Session::Testany(std::span<Request*> requests, size_t* index, bool* done,
                        MessageStatus* status) {
  (void)ProgressOnce();
  Status result;
  *done = TakeAny(requests, index, status, &result);
  if (!*done) {
    *index = kNoIndex;
    if (status != nullptr) *status = MessageStatus();
  } else if (result.code() == RFT_ERR_PROC_FAILED_PENDING) {
    *done = false;  // held: it stays active, `index` says which
  }
  return result;
}

Status Session::Some(std::span<Request*> requests, bool block, std::vector<size_t>* indices,
                     std::vector<MessageStatus>* statuses) {
  indices->clear();
  statuses->clear();
  if (!block) (void)ProgressOnce();
  for (;;) {
    bool active = false;
    bool failed = false;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (requests[i] == nullptr) continue;
      active = true;
      if (!Finished(requests[i])) continue;
      MessageStatus status;
      const Status result = Wait(&requests[i], &status);
      status.error = result.code();
      failed = failed || !result.ok();
      indices->push_back(i);
      statuses->push_back(status);
    }
    if (!active) return Status::Ok();  // the caller reports RFT_UNDEFINED
    if (indices->empty()) {
      // Held ANY_SOURCE receives are reported (they stay active) when nothing else is done.
      const Communicator* held_on = nullptr;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (requests[i] == nullptr || !Held(requests[i])) continue;
        held_on = requests[i]->comm;
        indices->push_back(i);
        MessageStatus status;
        status.error = RFT_ERR_PROC_FAILED_PENDING;
        statuses->push_back(status);
      }
      if (held_on != nullptr) {
        return Status(RFT_ERR_IN_STATUS, "ANY_SOURCE receives on " + held_on->name() +
                                             " are held by an unacknowledged failure and stay "
                                             "active; each status says its error");
      }
    }
    if (!indices->empty() || !block) {
      if (!failed) return Status::Ok();
      return Status(RFT_ERR_IN_STATUS, "some requests failed; each status says its own error");
    }
    ProgressOrIdle();
  }
}

void Session::FreeRequest(Request* request) {
  RequestTable::Orphan(request);
  if (Finished(request)) {
    EndFreed(request);
  } else {
    freed_.push_back(request);
  }
}

size_t Session::AdvanceBackground() {
  size_t moved = 0;
  if (!active_collectives_.empty()) moved += AdvanceCollectives();
  if (!freed_.empty()) moved += SweepFreed();
  return moved;
}

size_t Session::SweepFreed() {
  size_t ended = 0;
  for (size_t i = 0; i < freed_.size();) {
    Request* request = freed_[i];
    if (!Finished(request)) {
      ++i;
      continue;
    }
    freed_[i] = freed_.back();
    freed_.pop_back();
    EndFreed(request);
    ++ended;
  }
  return ended;
}

void Session::EndFreed(Request* request) {
  Status result;
  if (request->collective != nullptr) {
    result = CompleteCollective(&request, false);  // finished: released
  } else {
    MessageStatus status;
    bool done = false;
    result = plane().Test(&request->inner, &done, &status);
    RFT_DCHECK(done, "a freed request ended before its operation did");
    ReleaseRequest(request);
  }
  switch (result.code()) {
    case RFT_SUCCESS:
    case RFT_ERR_PROC_FAILED:
    case RFT_ERR_PROC_FAILED_PENDING:
    case RFT_ERR_REVOKED:
      return;
    default:
      if (options_.on_freed_error) {
        options_.on_freed_error(result);
      } else {
        RFT_LOG_WARN("a request the program freed ended with %s", result.ToString().c_str());
      }
  }
}

Status Session::Cancel(Request* request) {
  if (request == nullptr) return ArgError("cancel: the request is null");
  if (request->collective != nullptr) {
    return ArgError(std::string("cancel: the request is a non-blocking ") +
                    request->collective->what() + ", which cannot be cancelled");
  }
  return plane().Cancel(request->inner);
}

}  // namespace rft::api
