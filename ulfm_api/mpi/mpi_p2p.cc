// Point-to-point messages: sends in every mode, receives, probes, persistent requests.
//
// Contiguous data of a predefined type goes to rft as bytes, from and into the caller's buffer;
// other data is packed into a request's scratch (sends) or received there and unpacked when the
// request completes. A request rft has completed before MPI may complete it (Testall with
// others pending) keeps rft's outcome until then.
#include <string.h>

#include <string>
#include <vector>

#include "ulfm_api/binding.h"
#include "ulfm_api/mpi/mpi_internal.h"
#include "ulfm_api/session.h"

namespace rft::mpi {

// A completed request at MPI_PROC_NULL: source PROC_NULL, tag ANY_TAG, count 0.
MPI_Request ProcNullRequest(MPI_Comm comm) {
  Request r;
  r.comm = comm;
  r.done = true;
  r.done_status.source = MPI_PROC_NULL;
  r.done_status.tag = MPI_ANY_TAG;
  return NewRequest(std::move(r));
}

namespace {

// The checks every send and receive makes, the arguments' reasons (which Raise gets).
[[gnu::noinline]] int CheckMessageArgsSlow(const Comm* c, MPI_Comm comm, int count,
                                           MPI_Datatype type, int peer, int tag, bool receive,
                                           const char* function) {
  if (c == nullptr) [[unlikely]]
    return BadComm(comm, function);
  if (int rc = CheckCountArg(count, function, comm); rc) [[unlikely]]
    return rc;
  if (!IsSimpleBuiltin(type)) {
    std::string message;
    if (int rc = CheckDatatype(type, function, &message); rc) return Raise(comm, rc, message);
  }
  if (int rc = CheckTagArg(tag, receive, function, comm); rc) [[unlikely]]
    return rc;
  return CheckRankArg(*c, peer, receive, function, comm);
}

// MPI_SUCCESS or what Raise returned. The usual case (a predefined type, a count, a tag and a
// rank in range) inline, without a call per argument: every message's post passes here.
[[gnu::always_inline]] inline int CheckMessageArgs(const Comm* c, MPI_Comm comm, int count,
                                                   MPI_Datatype type, int peer, int tag,
                                                   bool receive, const char* function) {
  if (c != nullptr && count >= 0 && IsSimpleBuiltin(type) &&
      (tag >= 0 || (receive && tag == MPI_ANY_TAG)) &&
      ((peer >= 0 && peer < c->peers) || peer == MPI_PROC_NULL ||
       (receive && peer == MPI_ANY_SOURCE))) [[likely]] {
    return MPI_SUCCESS;
  }
  return CheckMessageArgsSlow(c, comm, count, type, peer, tag, receive, function);
}

// Posts a send of `count` elements of `type`; *request gets the MPI request. A synchronous one
// (Ssend, Issend, Ssend_init) completes once the receiver matched it.
int PostSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
             MPI_Request* request, const char* function, bool synchronous = false) {
  Comm* c = FindComm(comm);
  if (int rc = CheckMessageArgs(c, comm, count, type, dest, tag, false, function); rc) return rc;
  if (dest == MPI_PROC_NULL) {
    *request = ProcNullRequest(comm);
    return MPI_SUCCESS;
  }
  // A small message usually leaves at once: then it needs no request of its own, here or in rft
  // (the message rate is the cost of the requests, docs/performance.md).
  if (!synchronous && IsSimpleBuiltin(type)) [[likely]] {
    int sent = 0;
    const int rc = rft_send_now(buf, static_cast<size_t>(count) * SimpleBuiltinSize(type), RFT_BYTE,
                                dest, tag, c->rft, &sent);
    if (rc != RFT_SUCCESS) [[unlikely]]
      return RaiseRft(comm, function, rc);
    if (sent) [[likely]] {
      *request = state().sent;
      return MPI_SUCCESS;
    }
  }
  // Made in place: the table entry is the request (nothing else adds entries meanwhile).
  Request* r;
  const MPI_Request handle = state().requests.Emplace(&r);
  r->comm = comm;
  const auto post = synchronous ? rft_issend : rft_isend;
  int rc;
  if (IsSimpleBuiltin(type)) [[likely]] {
    rc = post(buf, static_cast<size_t>(count) * SimpleBuiltinSize(type), RFT_BYTE, dest, tag,
              c->rft, &r->rft);
  } else {
    const Datatype* t = FindDatatype(type);
    r->scratch.resize(static_cast<size_t>(count * t->size));
    Pack(*t, buf, static_cast<size_t>(count), r->scratch.data());
    rc = post(r->scratch.data(), r->scratch.size(), RFT_BYTE, dest, tag, c->rft, &r->rft);
  }
  if (rc != RFT_SUCCESS) {
    state().requests.Remove(handle);
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, function, rc);
  }
  *request = handle;
  return MPI_SUCCESS;
}

int PostReceive(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (int rc = CheckMessageArgs(c, comm, count, type, source, tag, true, function); rc) return rc;
  if (source == MPI_PROC_NULL) {
    *request = ProcNullRequest(comm);
    return MPI_SUCCESS;
  }
  Request* r;
  const MPI_Request handle = state().requests.Emplace(&r);
  r->comm = comm;
  int rc;
  if (IsSimpleBuiltin(type)) [[likely]] {
    rc = rft_irecv(buf, static_cast<size_t>(count) * SimpleBuiltinSize(type), RFT_BYTE,
                   ToRftSource(source), ToRftTag(tag), c->rft, &r->rft);
  } else {
    const Datatype* t = FindDatatype(type);
    r->scratch.resize(static_cast<size_t>(count * t->size));
    const Datatype plan = *t;  // the type may be freed before the receive completes
    r->finish = [plan, buf](Request& self, const rft_status_t& st) {
      const size_t whole = plan.size == 0 ? 0 : st.count / static_cast<size_t>(plan.size);
      Unpack(plan, self.scratch.data(), whole, buf);
      return MPI_SUCCESS;
    };
    rc = rft_irecv(r->scratch.data(), r->scratch.size(), RFT_BYTE, ToRftSource(source),
                   ToRftTag(tag), c->rft, &r->rft);
  }
  if (rc != RFT_SUCCESS) {
    state().requests.Remove(handle);
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, function, rc);
  }
  *request = handle;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rft::mpi

using namespace rft::mpi;

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c != nullptr && IsSimpleBuiltin(datatype) && count >= 0 && tag >= 0 && dest >= 0 &&
      dest < c->peers && rft::api::binding::CommUsable(c->rft)) [[likely]] {
    // The session's send, as rft_send makes it: these checks stand for rft_send's, which would
    // add theirs to every message's critical path (docs/performance.md, "The MPI layer's own
    // cost").
    const rft::Status sent = rft::api::binding::session()->Send(
        *c->rft->comm, buf, static_cast<size_t>(count) * SimpleBuiltinSize(datatype), dest, tag);
    if (sent.ok()) [[likely]]
      return MPI_SUCCESS;
    return RaiseRft(comm, "MPI_Send", rft::api::binding::RaiseError(c->rft, sent));
  }
  MPI_Request request;
  if (int rc = PostSend(buf, count, datatype, dest, tag, comm, &request, "MPI_Send"); rc) return rc;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

// Synchronous: complete once the receiver matched the message (rft_issend). The ready mode is a
// standard send (a receive is posted, the program promises; the standard send needs none).
int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  MPI_Request request;
  if (int rc = PostSend(buf, count, datatype, dest, tag, comm, &request, "MPI_Ssend", true); rc) {
    return rc;
  }
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int PMPI_Buffer_attach(void* buffer, int size) {
  State& s = state();
  if (s.bsend_buffer != nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_BUFFER, "MPI_Buffer_attach: a buffer is attached");
  }
  if (size < 0) return Raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Buffer_attach: size < 0");
  s.bsend_buffer = buffer;
  s.bsend_size = size;
  return MPI_SUCCESS;
}

int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  State& s = state();
  // MPI: detach waits until the buffered messages have gone.
  while (s.bsend_in_use > 0 && !s.detached.empty()) {
    Request* r = s.requests.Find(s.detached.front());
    if (r != nullptr) Poll(*r, true);
    PollDetached();
  }
  *static_cast<void**>(buffer_addr) = s.bsend_buffer;
  *size = s.bsend_size;
  s.bsend_buffer = nullptr;
  s.bsend_size = 0;
  return MPI_SUCCESS;
}

int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  State& s = state();
  PollDetached();
  const Datatype* t = FindDatatype(datatype);
  const long bytes = t != nullptr && count >= 0 ? static_cast<long>(count * t->size) : 0;
  if (s.bsend_in_use + bytes + MPI_BSEND_OVERHEAD > s.bsend_size) {
    return Raise(comm, MPI_ERR_BUFFER,
                 "MPI_Bsend: " + std::to_string(bytes) + " bytes (+" +
                     std::to_string(MPI_BSEND_OVERHEAD) + " overhead) do not fit in the " +
                     std::to_string(s.bsend_size - s.bsend_in_use) +
                     " bytes left of the attached buffer (MPI_Buffer_attach)");
  }
  // The message is copied out at once (into rft's own scratch, charged against the attached
  // buffer's size), so the caller's buffer is free when this returns, as MPI says.
  MPI_Request inner;
  std::vector<char> copy(static_cast<size_t>(bytes));
  if (t != nullptr) Pack(*t, buf, static_cast<size_t>(count), copy.data());
  const int rc = PostSend(copy.data(), static_cast<int>(bytes), MPI_BYTE, dest, tag, comm, &inner,
                          "MPI_Bsend");
  if (rc != MPI_SUCCESS) return rc;
  *request = ProcNullRequest(comm);         // the buffered send is complete for the program
  if (inner == s.sent) return MPI_SUCCESS;  // it left at once: nothing to hold
  Request* r = s.requests.Find(inner);
  r->scratch = std::move(copy);  // a vector's move keeps its buffer: the send still reads it
  r->bsend_charge = bytes + MPI_BSEND_OVERHEAD;
  s.bsend_in_use += r->bsend_charge;
  s.detached.push_back(inner);
  return MPI_SUCCESS;
}

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  MPI_Request request;
  const int rc = PMPI_Ibsend(buf, count, datatype, dest, tag, comm, &request);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Request_free(&request);
}

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  Comm* c = FindComm(comm);
  if (c != nullptr && IsSimpleBuiltin(datatype) && count >= 0 && source != MPI_PROC_NULL &&
      source < c->peers && source >= MPI_ANY_SOURCE && tag >= MPI_ANY_TAG &&
      rft::api::binding::CommUsable(c->rft)) [[likely]] {
    // The session's receive, as rft_recv makes it (see PMPI_Send).
    rft::transport::MessageStatus received;
    const rft::Status result = rft::api::binding::session()->Recv(
        *c->rft->comm, buf, static_cast<size_t>(count) * SimpleBuiltinSize(datatype),
        ToRftSource(source), ToRftTag(tag), &received);
    if (status != MPI_STATUS_IGNORE && (result.ok() || result.code() == RFT_ERR_TRUNCATE)) {
      rft_status_t st;
      rft::api::binding::ToStatus(received, &st);
      FillStatus(status, st, MPI_UNDEFINED);
    }
    if (result.ok()) [[likely]]
      return MPI_SUCCESS;
    const int rc = rft::api::binding::RaiseError(c->rft, result);
    // ULFM: a blocking receive has no request to keep: PENDING is reported as PROC_FAILED.
    return RaiseRft(comm, "MPI_Recv", rc == RFT_ERR_PROC_FAILED_PENDING ? RFT_ERR_PROC_FAILED : rc);
  }
  MPI_Request request;
  if (int rc = PostReceive(buf, count, datatype, source, tag, comm, &request, "MPI_Recv"); rc) {
    return rc;
  }
  return PMPI_Wait(&request, status);
}

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return PostSend(buf, count, datatype, dest, tag, comm, request, "MPI_Isend");
}

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return PostSend(buf, count, datatype, dest, tag, comm, request, "MPI_Issend", true);
}

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  return PostSend(buf, count, datatype, dest, tag, comm, request, "MPI_Irsend");
}

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return PostReceive(buf, count, datatype, source, tag, comm, request, "MPI_Irecv");
}

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  MPI_Request requests[2];
  int rc = PostReceive(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0],
                       "MPI_Sendrecv");
  if (rc != MPI_SUCCESS) return rc;
  rc = PostSend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[1], "MPI_Sendrecv");
  if (rc != MPI_SUCCESS) {
    PMPI_Cancel(&requests[0]);
    PMPI_Request_free(&requests[0]);
    return rc;
  }
  // The send first: a failed send must not leave the receive waiting for a message the peer
  // will not send.
  const int send_rc = PMPI_Wait(&requests[1], MPI_STATUS_IGNORE);
  if (send_rc != MPI_SUCCESS) {
    PMPI_Cancel(&requests[0]);
    PMPI_Request_free(&requests[0]);
    return send_rc;
  }
  return PMPI_Wait(&requests[0], status);
}

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const Datatype* t = FindDatatype(datatype);
  if (t == nullptr) {
    std::string message;
    return Raise(comm, CheckDatatype(datatype, "MPI_Sendrecv_replace", &message), message);
  }
  if (int rc = CheckCountArg(count, "MPI_Sendrecv_replace", comm); rc) return rc;
  std::vector<char> copy(static_cast<size_t>(count * t->size));
  Pack(*t, buf, static_cast<size_t>(count), copy.data());
  return PMPI_Sendrecv(copy.data(), static_cast<int>(copy.size()), MPI_BYTE, dest, sendtag, buf,
                       count, datatype, source, recvtag, comm, status);
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Probe");
  if (int rc = CheckTagArg(tag, true, "MPI_Probe", comm); rc) return rc;
  if (int rc = CheckRankArg(*c, source, true, "MPI_Probe", comm); rc) return rc;
  if (source == MPI_PROC_NULL) {
    EmptyStatus(status);
    if (status != MPI_STATUS_IGNORE) status->MPI_SOURCE = MPI_PROC_NULL;
    return MPI_SUCCESS;
  }
  rft_status_t st;
  const int rc = rft_probe(ToRftSource(source), ToRftTag(tag), c->rft, &st);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Probe", rc);
  FillStatus(status, st, MPI_UNDEFINED);
  return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Iprobe");
  if (int rc = CheckTagArg(tag, true, "MPI_Iprobe", comm); rc) return rc;
  if (int rc = CheckRankArg(*c, source, true, "MPI_Iprobe", comm); rc) return rc;
  PollDetached();
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    EmptyStatus(status);
    if (status != MPI_STATUS_IGNORE) status->MPI_SOURCE = MPI_PROC_NULL;
    return MPI_SUCCESS;
  }
  rft_status_t st;
  const int rc = rft_iprobe(ToRftSource(source), ToRftTag(tag), c->rft, flag, &st);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Iprobe", rc);
  if (*flag) FillStatus(status, st, MPI_UNDEFINED);
  return MPI_SUCCESS;
}

// Matched probes: the probed message is received at once into the message's scratch (rft keeps
// messages of one sender and tag in order, and nothing runs between the probe and the receive),
// so no other receive can take it.
static int TakeMessage(MPI_Comm comm, const rft_status_t& probed, MPI_Message* message,
                       MPI_Status* status, const char* function) {
  Comm* c = FindComm(comm);
  Request m;
  m.comm = comm;
  m.is_message = true;
  m.scratch.resize(probed.count);
  rft_status_t st;
  const int rc = rft_recv(m.scratch.data(), m.scratch.size(), RFT_BYTE, probed.source, probed.tag,
                          c->rft, &st);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  m.done = true;
  m.done_status = st;
  FillStatus(status, st, MPI_UNDEFINED);
  *message = NewRequest(std::move(m));
  return MPI_SUCCESS;
}

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    return PMPI_Probe(source, tag, comm, status);
  }
  MPI_Status probed;
  const int rc = PMPI_Probe(source, tag, comm, &probed);
  if (rc != MPI_SUCCESS) return rc;
  rft_status_t st{};
  st.source = probed.MPI_SOURCE;
  st.tag = probed.MPI_TAG;
  st.count = static_cast<size_t>(StatusBytes(probed));
  return TakeMessage(comm, st, message, status, "MPI_Mprobe");
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    return PMPI_Iprobe(source, tag, comm, flag, status);
  }
  MPI_Status probed;
  const int rc = PMPI_Iprobe(source, tag, comm, flag, &probed);
  if (rc != MPI_SUCCESS || !*flag) return rc;
  rft_status_t st{};
  st.source = probed.MPI_SOURCE;
  st.tag = probed.MPI_TAG;
  st.count = static_cast<size_t>(StatusBytes(probed));
  return TakeMessage(comm, st, message, status, "MPI_Improbe");
}

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status) {
  if (*message == MPI_MESSAGE_NO_PROC) {
    EmptyStatus(status);
    if (status != MPI_STATUS_IGNORE) status->MPI_SOURCE = MPI_PROC_NULL;
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  Request* m = state().requests.Find(*message);
  if (m == nullptr || !m->is_message) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Mrecv: invalid or used message handle");
  }
  const MPI_Comm comm = m->comm;
  std::string why;
  if (int rc = CheckDatatype(datatype, "MPI_Mrecv", &why); rc) return Raise(comm, rc, why);
  const Datatype* t = FindDatatype(datatype);
  const size_t capacity = static_cast<size_t>(count) * static_cast<size_t>(t->size);
  const size_t bytes = std::min(capacity, m->scratch.size());
  const size_t whole = t->size == 0 ? 0 : bytes / static_cast<size_t>(t->size);
  Unpack(*t, m->scratch.data(), whole, buf);
  rft_status_t st = m->done_status;
  const bool truncated = m->scratch.size() > capacity;
  st.count = bytes;
  FillStatus(status, st, MPI_UNDEFINED);
  state().requests.Remove(*message);
  *message = MPI_MESSAGE_NULL;
  if (truncated) {
    return Raise(comm, MPI_ERR_TRUNCATE,
                 "MPI_Mrecv: the message has " + std::to_string(st.count) +
                     " bytes, the buffer room for " + std::to_string(capacity));
  }
  return MPI_SUCCESS;
}

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request) {
  MPI_Status status;
  Request* m = state().requests.Find(*message);
  const MPI_Comm comm = m != nullptr ? m->comm : MPI_COMM_WORLD;
  const int rc = PMPI_Mrecv(buf, count, datatype, message, &status);
  if (rc != MPI_SUCCESS) return rc;
  Request done;
  done.comm = comm;
  done.done = true;
  done.done_status.source = status.MPI_SOURCE;
  done.done_status.tag = status.MPI_TAG;
  done.done_status.count = static_cast<size_t>(StatusBytes(status));
  *request = NewRequest(std::move(done));
  return MPI_SUCCESS;
}

// ---- Persistent requests ----
static int PersistentSend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request* request, const char* function,
                          bool synchronous = false) {
  Comm* c = FindComm(comm);
  if (int rc = CheckMessageArgs(c, comm, count, datatype, dest, tag, false, function); rc) {
    return rc;
  }
  Request r;
  r.comm = comm;
  r.persistent = true;
  r.active = false;
  r.start = [=](MPI_Request* posted) {
    return PostSend(buf, count, datatype, dest, tag, comm, posted, "MPI_Start", synchronous);
  };
  *request = NewRequest(std::move(r));
  return MPI_SUCCESS;
}

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return PersistentSend(buf, count, datatype, dest, tag, comm, request, "MPI_Send_init");
}
int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return PersistentSend(buf, count, datatype, dest, tag, comm, request, "MPI_Ssend_init", true);
}
int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return PersistentSend(buf, count, datatype, dest, tag, comm, request, "MPI_Rsend_init");
}

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  Comm* c = FindComm(comm);
  if (int rc = CheckMessageArgs(c, comm, count, datatype, source, tag, true, "MPI_Recv_init"); rc) {
    return rc;
  }
  Request r;
  r.comm = comm;
  r.persistent = true;
  r.active = false;
  r.start = [=](MPI_Request* posted) {
    return PostReceive(buf, count, datatype, source, tag, comm, posted, "MPI_Start");
  };
  *request = NewRequest(std::move(r));
  return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request* request) {
  Request* r = state().requests.Find(*request);
  if (r == nullptr || !r->persistent) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Start: not a persistent request");
  }
  if (r->active) return Raise(r->comm, MPI_ERR_REQUEST, "MPI_Start: the request is active");
  // The operation is posted as a request of its own, then folded into the persistent one, which
  // keeps its handle. Posting may grow the table: the function is kept, and r found again.
  const auto start = r->start;
  MPI_Request posted;
  const int rc = start(&posted);
  if (rc != MPI_SUCCESS) return rc;
  r = state().requests.Find(*request);
  Request* inner = state().requests.Find(posted);
  r->rft = inner->rft;
  r->done = inner->done;
  r->done_error = inner->done_error;
  r->done_status = inner->done_status;
  r->scratch = std::move(inner->scratch);  // a moved vector keeps its buffer: rft still uses it
  r->finish = std::move(inner->finish);
  r->active = true;
  inner->rft = RFT_REQUEST_NULL;
  if (!inner->shared) state().requests.Remove(posted);
  return MPI_SUCCESS;
}

int PMPI_Startall(int count, MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) {
    if (int rc = PMPI_Start(&requests[i]); rc) return rc;
  }
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Send)
RFT_MPI_ALIAS(Ssend)
RFT_MPI_ALIAS(Rsend)
RFT_MPI_ALIAS(Bsend)
RFT_MPI_ALIAS(Ibsend)
RFT_MPI_ALIAS(Buffer_attach)
RFT_MPI_ALIAS(Buffer_detach)
RFT_MPI_ALIAS(Recv)
RFT_MPI_ALIAS(Isend)
RFT_MPI_ALIAS(Issend)
RFT_MPI_ALIAS(Irsend)
RFT_MPI_ALIAS(Irecv)
RFT_MPI_ALIAS(Sendrecv)
RFT_MPI_ALIAS(Sendrecv_replace)
RFT_MPI_ALIAS(Probe)
RFT_MPI_ALIAS(Iprobe)
RFT_MPI_ALIAS(Mprobe)
RFT_MPI_ALIAS(Improbe)
RFT_MPI_ALIAS(Mrecv)
RFT_MPI_ALIAS(Imrecv)
RFT_MPI_ALIAS(Send_init)
RFT_MPI_ALIAS(Ssend_init)
RFT_MPI_ALIAS(Rsend_init)
RFT_MPI_ALIAS(Recv_init)
RFT_MPI_ALIAS(Start)
RFT_MPI_ALIAS(Startall)
