// The data plane's receive side: UCX hands every arriving rft message to OnActiveMessage
// (inside ucp_worker_progress), which validates the header, matches it against the posted
// receives of its context, and delivers it (eager), fetches it (rendezvous) or keeps it
// (unexpected). Also the completions of UCX operations the data plane started.
#include <algorithm>
#include <cstring>

#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"
#include "transport/dataplane/verbs_path.h"

namespace rft::transport {

// OnActiveMessage's and OnVerbsMessage's body, inline into both.
[[gnu::always_inline]] inline ucs_status_t DataPlane::Arrive(const void* header,
                                                             size_t header_length, void* data,
                                                             size_t length, bool rendezvous,
                                                             bool persistent) {
  void* payload = data;
  size_t payload_length = length;
  if (header_length == 0 && !rendezvous) {
    // A small message: the header leads the data (see Isend).
    if (length < kWireHeaderSize) {
      drops_.Record(DecodeError::kTooShort);
      return UCS_OK;
    }
    header = data;
    header_length = kWireHeaderSize;
    payload = static_cast<std::byte*>(data) + kWireHeaderSize;
    payload_length = length - kWireHeaderSize;
  }
  WireHeader decoded;
  const DecodeError error =
      DecodeHeader(std::span<const std::byte>(static_cast<const std::byte*>(header), header_length),
                   payload_length, job_token_, size_, &decoded);
  if (error != DecodeError::kNone) {
    // Returning UCS_OK lets UCX drop the data (and end a rendezvous without fetching it).
    drops_.Record(error);
    return UCS_OK;
  }
  if (decoded.type != MessageType::kEager) {
    if (rendezvous) {
      drops_.Record(DecodeError::kBadPayload);  // rft's own protocol messages are small
      return UCS_OK;
    }
    const std::span<const std::byte> bytes(static_cast<const std::byte*>(payload), payload_length);
    switch (decoded.type) {
      case MessageType::kRendezvousRequest:
        HandlePullRequest(decoded, bytes);
        break;
      case MessageType::kRendezvousDone:
        HandlePullDone(decoded, bytes);
        break;
      case MessageType::kVerbsAddress:
        HandleVerbsAddress(decoded, bytes);
        break;
      case MessageType::kVerbsAsk:
        HandleVerbsAsk(decoded, bytes);
        break;
      case MessageType::kVerbsRefuse:
        HandleVerbsRefuse(decoded, bytes);
        break;
      case MessageType::kVerbsClose:
        HandleVerbsClose(decoded, bytes);
        break;
      case MessageType::kVerbsStay:
        HandleVerbsStay(decoded, bytes);
        break;
      case MessageType::kVerbsClosing:
        HandleVerbsClosing(decoded, bytes);
        break;
      case MessageType::kVerbsClosed:
        HandleVerbsClosed(decoded, bytes);
        break;
      case MessageType::kRevoke:
        // Handled at the end of this Progress, in order with the control plane's news (this is
        // the data-plane thread: no wake-up needed).
        reports_.PushFromOwner({.kind = Notice::Kind::kContextRevoked,
                                .id = decoded.context_id,
                                .epoch = decoded.epoch,
                                .owner = static_cast<uint32_t>(decoded.tag),
                                .heard = true});
        break;
      default:
        drops_.Record(DecodeError::kUnknownType);  // not a type the data id carries
        break;
    }
    return UCS_OK;
  }
  Context* context = ContextForArrival(decoded);
  if (context == nullptr) return UCS_OK;  // dropped and counted
  PostedReceive* match = context->queue.MatchArrival(decoded.source, decoded.tag);
  if (match != nullptr && !rendezvous) [[likely]] {
    // The usual case, delivered here: the general path's call cost as much as the delivery.
    DeliverEager(static_cast<Request*>(match->owner), decoded.source, decoded.tag, payload,
                 payload_length);
    return UCS_OK;
  }
  return HandleMessage(context, match, decoded, payload, payload_length, data, rendezvous,
                       persistent);
}

ucs_status_t DataPlane::OnActiveMessage(void* arg, const void* header, size_t header_length,
                                        void* data, size_t length,
                                        const ucp_am_recv_param_t* param) {
  auto* self = static_cast<DataPlane*>(arg);
  // The destructor progresses UCX while its endpoints close: what arrives then is for a plane
  // that is going (answering it would use the endpoints being destroyed).
  if (self->closing_endpoints_) [[unlikely]]
    return UCS_OK;
  return self->Arrive(header, header_length, data, length,
                      (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0,
                      (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) != 0);
}

void DataPlane::OnVerbsMessage(void* plane, Rank source, std::span<const std::byte> message) {
  auto* self = static_cast<DataPlane*>(plane);
  // The least recently used pair closes first.
  self->verbs_->last_used[source] = ++self->verbs_->tick;
  if (self->closing_endpoints_) [[unlikely]]
    return;
  // What a UCX active message with the header first carries: the same receive path (unexpected
  // data is copied out, since the slot goes back).
  self->Arrive(nullptr, 0, const_cast<std::byte*>(message.data()), message.size(),
               /*rendezvous=*/false, /*persistent=*/false);
}

DataPlane::Context* DataPlane::ContextForArrivalSlow(const WireHeader& header) {
  Context* context = FindContext(header.context_id);
  if (context == nullptr) {
    // A context this process has not used yet (its peers got there first): created once.
    auto created = GetContext(header.context_id);
    if (!created.ok()) {
      drops_.Record(DecodeError::kUnknownContext);
      return nullptr;
    }
    context = *created;
  }
  if (header.epoch < context->epoch) {
    drops_.Record(DecodeError::kStaleEpoch);
    return nullptr;
  }
  if (context->revoked && header.epoch == context->epoch) [[unlikely]] {
    // Returning UCS_OK drops it (and releases a UCX rendezvous); a same-node sender is told.
    // A later life's message is kept: a member that freed the revoked communicator sooner may
    // already use its context again (SetContextEpoch keeps what is not older).
    drops_.Record(DecodeError::kRevoked);
    return nullptr;
  }
  return context;
}

// Inline (OnActiveMessage above, DeliverUnexpected): every eager message that finds its receive
// posted comes here.
[[gnu::always_inline]] inline void DataPlane::DeliverEager(Request* request, Rank source,
                                                           int32_t tag, const void* data,
                                                           size_t length) {
  const size_t count = std::min(length, request->capacity);
  if (count > 0) std::memcpy(request->buffer, data, count);
  request->status.source = source;
  request->status.tag = tag;
  request->status.count = count;
  request->status.message_length = length;
  Complete(request, length > request->capacity ? RFT_ERR_TRUNCATE : RFT_SUCCESS);
}

ucs_status_t DataPlane::HandleMessage(Context* context, PostedReceive* match,
                                      const WireHeader& header, void* data, size_t length,
                                      void* ucx_data, bool rendezvous, bool persistent,
                                      const RendezvousDescriptor* cma) {
  const Rank source = header.source;
  if (match != nullptr) {
    // OnActiveMessage delivers a matched eager message itself: one that matched here is a
    // rendezvous request (UCX's, or the same-node one).
    RFT_DCHECK(cma != nullptr || rendezvous, "a matched eager message reached HandleMessage");
    auto* request = static_cast<Request*>(match->owner);
    if (cma != nullptr) {
      PullMessage(request, source, header.tag, *cma);
    } else if (endpoints_->failed(source)) {
      request->status.message_length = length;
      CompleteReceive(request, source, header.tag, RFT_ERR_PROC_FAILED);
    } else {
      StartFetch(request, source, header.tag, data, length);  // UCX owns `data` from here
    }
    return UCS_OK;
  }

  Unexpected* message = unexpected_.Acquire();
  message->node.owner = message;
  message->node.source = source;
  message->node.tag = header.tag;
  message->length = length;
  message->epoch = header.epoch;
  ucs_status_t result = UCS_OK;
  if (cma != nullptr) {
    message->storage = Unexpected::Storage::kPull;  // nothing held: the data waits at the sender
    message->pull = *cma;
    message->length = cma->length;
  } else if (rendezvous) {
    if (endpoints_->failed(source)) {
      message->storage = Unexpected::Storage::kSenderFailed;  // UCS_OK drops the descriptor
    } else {
      message->storage = Unexpected::Storage::kRendezvous;
      message->data = data;
      message->ucx_data = ucx_data;
      result = UCS_INPROGRESS;  // keep the descriptor until a receive matches
    }
  } else if (persistent) {
    message->storage = Unexpected::Storage::kUcxData;  // no copy: UCX keeps the buffer for us
    message->data = data;
    message->ucx_data = ucx_data;
    result = UCS_INPROGRESS;
  } else if (std::byte* copy = buffers_.Acquire(length)) {
    message->storage = Unexpected::Storage::kPooled;
    if (length > 0) std::memcpy(copy, data, length);
    message->data = copy;
  } else {
    // Eager beyond our pool's classes: the sender runs with a larger RFT_EAGER_LIMIT.
    message->storage = Unexpected::Storage::kHeap;
    auto* copy_heap = new std::byte[length];
    std::memcpy(copy_heap, data, length);
    message->data = copy_heap;
  }
  context->queue.AddUnexpected(&message->node);
  return result;
}

void DataPlane::StartFetch(Request* request, Rank source, int32_t tag, void* descriptor,
                           size_t length) {
  request->status.source = source;
  request->status.tag = tag;
  request->status.count = std::min(length, request->capacity);
  request->status.message_length = length;
  ucp_request_param_t param;
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.recv_am = &OnFetchDone;
  param.user_data = request;
  void* target = request->buffer;
  size_t count = length;
  if (length > request->capacity) {
    // UCX fetches whole messages only. Nothing is allocated by a length the peer chose: the
    // truncating datatype keeps what fits and drops the rest as it arrives.
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    param.datatype = truncating_datatype_;
    target = request;
    count = 1;
  }
  UcxBusy();  // the fetch completes in UCX's progress
  void* ucx_request = ucp_am_recv_data_nbx(worker_->get(), descriptor, target, count, &param);
  if (UCS_PTR_IS_PTR(ucx_request) && ucx_request != nullptr) {
    request->ucx_request = ucx_request;
    if (!request->peer_link.linked()) {
      request->peer = source;  // a wildcard receive now depends on this sender
      LinkToPeer(request, source);
    }
    return;
  }
  FinishUcxOperation(request, nullptr, UCS_PTR_STATUS(ucx_request));
}

namespace {

// The truncating datatype's operations (receive only). Its state is the Request: the message's
// full length is what UCX expects (status.message_length), the receive buffer takes the first
// `capacity` bytes, and nothing is written once the request completed for its caller (its
// peer failed; the buffer may be reused).
void* TruncatingStartPack(void*, const void*, size_t) { return nullptr; }
void* TruncatingStartUnpack(void*, void* request, size_t) { return request; }
size_t TruncatingPackedSize(void* state) {
  return state == nullptr ? 0 : static_cast<Request*>(state)->status.message_length;
}
size_t TruncatingPack(void*, size_t, void*, size_t) { return 0; }
ucs_status_t TruncatingUnpack(void* state, size_t offset, const void* src, size_t length) {
  auto* request = static_cast<Request*>(state);
  if (request->complete || offset >= request->capacity) return UCS_OK;
  const size_t kept = std::min(length, request->capacity - offset);
  std::memcpy(static_cast<std::byte*>(request->buffer) + offset, src, kept);
  return UCS_OK;
}
void TruncatingFinish(void*) {}

constexpr ucp_generic_dt_ops_t kTruncatingOps = {
    .start_pack = &TruncatingStartPack,
    .start_unpack = &TruncatingStartUnpack,
    .packed_size = &TruncatingPackedSize,
    .pack = &TruncatingPack,
    .unpack = &TruncatingUnpack,
    .finish = &TruncatingFinish,
};

}  // namespace

Status DataPlane::CreateTruncatingDatatype() {
  const ucs_status_t status =
      ucp_dt_create_generic(&kTruncatingOps, nullptr, &truncating_datatype_);
  if (status != UCS_OK) {
    return OtherError(std::string("ucp_dt_create_generic: ") + ucs_status_string(status));
  }
  has_truncating_datatype_ = true;
  return Status::Ok();
}

void DataPlane::DeliverUnexpected(Request* request, Unexpected* message) {
  const Rank source = message->node.source;
  const int32_t tag = message->node.tag;
  switch (message->storage) {
    case Unexpected::Storage::kRendezvous: {
      void* descriptor = message->data;
      const size_t length = message->length;
      message->data = nullptr;  // UCX takes the descriptor back through the fetch
      unexpected_.Release(message);
      if (endpoints_->failed(source)) {
        ucp_am_data_release(worker_->get(), descriptor);
        CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);
        return;
      }
      StartFetch(request, source, tag, descriptor, length);
      return;
    }
    case Unexpected::Storage::kPull: {
      const RendezvousDescriptor descriptor = message->pull;
      unexpected_.Release(message);
      PullMessage(request, source, tag, descriptor);
      return;
    }
    case Unexpected::Storage::kSenderFailed:
      request->status.message_length = message->length;
      unexpected_.Release(message);
      CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);
      return;
    default:
      DeliverEager(request, source, tag, message->data, message->length);
      ReleaseUnexpected(message);
      return;
  }
}

void DataPlane::ReleaseUnexpected(Unexpected* message) {
  switch (message->storage) {
    case Unexpected::Storage::kUcxData:
    case Unexpected::Storage::kRendezvous:
      ucp_am_data_release(worker_->get(), message->ucx_data);
      break;
    case Unexpected::Storage::kPooled:
      buffers_.Release(static_cast<std::byte*>(message->data), message->length);
      break;
    case Unexpected::Storage::kHeap:
      delete[] static_cast<std::byte*>(message->data);
      break;
    case Unexpected::Storage::kPull:
      // Never received (purged): the sender still waits for word that its buffer is free.
      SendPullDone(message->node.source, message->pull, kRendezvousDiscarded);
      break;
    case Unexpected::Storage::kSenderFailed:
      break;
  }
  unexpected_.Release(message);
}

void DataPlane::OnSendDone(void* ucx_request, ucs_status_t status, void* user_data) {
  auto* request = static_cast<Request*>(user_data);
  request->plane->FinishUcxOperation(request, ucx_request, status);
}

void DataPlane::OnFetchDone(void* ucx_request, ucs_status_t status, size_t, void* user_data) {
  auto* request = static_cast<Request*>(user_data);
  request->plane->FinishUcxOperation(request, ucx_request, status);
}

void DataPlane::FinishUcxOperation(Request* request, void* ucx_request, ucs_status_t status) {
  if (ucx_request != nullptr) ucp_request_free(ucx_request);
  request->ucx_request = nullptr;
  if (request->orphaned) {
    requests_.Release(request);  // completed for the user long ago (its peer failed)
    return;
  }
  if (request->complete) return;  // failure completion got there first
  rft_error_t error = internal::ErrorFromUcx(status);
  if (error == RFT_ERR_OTHER) [[unlikely]] {
    // Any other transport error on an operation with one peer means the connection to that
    // peer is gone (seen: a shared-memory error on an eager send to a receiver just killed).
    // Fail-stop: the peer is reported failed, like one whose endpoint failed, and the
    // operation ends as ULFM says an operation with a failed peer does.
    const Rank peer = request->kind == RequestKind::kSend ? request->peer : request->status.source;
    if (peer < size_ && peer != rank_) {
      if (!peers_[peer].transport_failed) {
        peers_[peer].transport_failed = true;
        RFT_LOG_WARN("%s with rank %u failed in UCX (%s): rank %u is reported failed",
                     request->kind == RequestKind::kSend ? "send" : "receive", peer,
                     ucs_status_string(status), peer);
        Discovered(peer);
      }
      error = RFT_ERR_PROC_FAILED;
    }
  }
  if (error == RFT_SUCCESS) {
    // A same-node rendezvous send is over when the receiver says so (HandlePullDone).
    if (request->awaiting_pull_done) return;
    error = request->status.error;  // what the done message said, if it came first
  } else {
    request->awaiting_pull_done = false;
  }
  if (error == RFT_SUCCESS && request->status.message_length > request->capacity &&
      request->kind == RequestKind::kReceive) {
    error = RFT_ERR_TRUNCATE;
  }
  Complete(request, error);
}

}  // namespace rft::transport
