// Point-to-point messages and requests.
//
// Contiguous data of a predefined type goes to rft as bytes, from and into the caller's buffer;
// other data is packed into a request's scratch (sends) or received there and unpacked when the
// request completes. A request rft has completed before MPI may complete it (Testall with
// others pending) keeps rft's outcome until then.
#include <string.h>

#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi {

void FillStatus(MPI_Status* status, const rft_status_t& from, int source_override) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = source_override != MPI_UNDEFINED ? source_override : from.source;
  status->MPI_TAG = from.tag;
  status->count_hi_and_cancelled = from.cancelled ? 1 : 0;
  SetStatusBytes(status, static_cast<MPI_Count>(from.count));
}

void EmptyStatus(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->count_lo = 0;
  status->count_hi_and_cancelled = 0;
}

MPI_Request NewRequest(Request request) { return state().requests.Add(std::move(request)); }

namespace {

// A completed request at MPI_PROC_NULL: source PROC_NULL, tag ANY_TAG, count 0.
MPI_Request ProcNullRequest(MPI_Comm comm) {
  Request r;
  r.comm = comm;
  r.done = true;
  r.done_status.source = MPI_PROC_NULL;
  r.done_status.tag = MPI_ANY_TAG;
  return NewRequest(std::move(r));
}

int BadRequest(const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_REQUEST,
               std::string(function) + ": invalid, freed or already completed request handle");
}

int BadCommArg(MPI_Comm comm, const char* function) {
  if (!Ready()) return NotInitialized(function);
  return Raise(comm, MPI_ERR_COMM,
               std::string(function) + ": " +
                   (comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "invalid or freed communicator"));
}

// The checks every send and receive makes. MPI_SUCCESS or what Raise returned.
int CheckMessageArgs(const Comm* c, MPI_Comm comm, int count, MPI_Datatype type, int peer, int tag,
                     bool receive, const char* function) {
  if (c == nullptr) [[unlikely]]
    return BadCommArg(comm, function);
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

// Posts a send of `count` elements of `type`; *request gets the MPI request.
int PostSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
             MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (int rc = CheckMessageArgs(c, comm, count, type, dest, tag, false, function); rc) return rc;
  if (dest == MPI_PROC_NULL) {
    *request = ProcNullRequest(comm);
    return MPI_SUCCESS;
  }
  Request r;
  r.comm = comm;
  int rc;
  if (IsSimpleBuiltin(type)) [[likely]] {
    rc = rft_isend(buf, static_cast<size_t>(count) * SimpleBuiltinSize(type), RFT_BYTE, dest, tag,
                   c->rft, &r.rft);
  } else {
    const Datatype* t = FindDatatype(type);
    r.scratch.resize(static_cast<size_t>(count * t->size));
    Pack(*t, buf, static_cast<size_t>(count), r.scratch.data());
    rc = rft_isend(r.scratch.data(), r.scratch.size(), RFT_BYTE, dest, tag, c->rft, &r.rft);
  }
  if (rc != RFT_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, function, rc);
  }
  *request = NewRequest(std::move(r));
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
  Request r;
  r.comm = comm;
  int rc;
  if (IsSimpleBuiltin(type)) [[likely]] {
    rc = rft_irecv(buf, static_cast<size_t>(count) * SimpleBuiltinSize(type), RFT_BYTE,
                   ToRftSource(source), ToRftTag(tag), c->rft, &r.rft);
  } else {
    const Datatype* t = FindDatatype(type);
    r.scratch.resize(static_cast<size_t>(count * t->size));
    const Datatype plan = *t;  // the type may be freed before the receive completes
    r.finish = [plan, buf](Request& self, const rft_status_t& st) {
      const size_t whole = plan.size == 0 ? 0 : st.count / static_cast<size_t>(plan.size);
      Unpack(plan, self.scratch.data(), whole, buf);
      return MPI_SUCCESS;
    };
    rc = rft_irecv(r.scratch.data(), r.scratch.size(), RFT_BYTE, ToRftSource(source), ToRftTag(tag),
                   c->rft, &r.rft);
  }
  if (rc != RFT_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, function, rc);
  }
  *request = NewRequest(std::move(r));
  return MPI_SUCCESS;
}

// Drives `r` towards completion: true when rft has completed it (its outcome kept in `r`), or
// when it has none (inactive, or completed at posting). With `block`, waits.
bool Poll(Request& r, bool block) {
  if (r.done || !r.active || r.rft == RFT_REQUEST_NULL) return true;
  rft_status_t st{};
  int flag = 1;
  const int rc = block ? rft_wait(&r.rft, &st) : rft_test(&r.rft, &flag, &st);
  if (rc == RFT_ERR_PROC_FAILED_PENDING) {
    // ULFM: an ANY_SOURCE receive is not completed by an unacknowledged failure; it stays.
    r.done = true;
    r.done_error = rc;
    return true;
  }
  if (!flag && rc == RFT_SUCCESS) return false;
  r.done = true;
  r.done_error = rc;
  r.done_status = st;
  r.rft = RFT_REQUEST_NULL;
  return true;
}

// MPI's completion of a request that Poll found done: the finish step, the status, and the
// request freed (or made inactive, when persistent). Returns the MPI class and, for an error,
// the message in *message. The caller raises it: after this the table may change.
int Complete(MPI_Request* handle, MPI_Status* status, std::string* message) {
  Request* r = state().requests.Find(*handle);
  if (!r->active && !r->done) {  // an inactive persistent request: an empty status
    EmptyStatus(status);
    return MPI_SUCCESS;
  }
  if (r->done_error == RFT_ERR_PROC_FAILED_PENDING) {
    r->done = false;
    r->done_error = RFT_SUCCESS;
    *message = rft_last_error_message();
    return MPIX_ERR_PROC_FAILED_PENDING;
  }
  int rc = FromRft(r->done_error);
  if (r->done_error != RFT_SUCCESS) *message = rft_last_error_message();
  if ((r->done_error == RFT_SUCCESS || r->done_error == RFT_ERR_TRUNCATE) && r->finish) {
    const int finished = r->finish(*r, r->done_status);
    if (rc == MPI_SUCCESS) rc = finished;
  }
  FillStatus(status, r->done_status, MPI_UNDEFINED);
  if (r->persistent) {
    r->active = false;
    r->done = false;
    r->done_error = RFT_SUCCESS;
  } else {
    state().requests.Remove(*handle);
    *handle = MPI_REQUEST_NULL;
  }
  return rc;
}

// Completes what the program freed, where rft has finished it.
void PollDetached() {
  State& s = state();
  for (size_t i = 0; i < s.detached.size();) {
    Request* r = s.requests.Find(s.detached[i]);
    if (r == nullptr || Poll(*r, false)) {
      if (r != nullptr) {
        s.bsend_in_use -= static_cast<long>(r->scratch.size()) + MPI_BSEND_OVERHEAD;
        s.requests.Remove(s.detached[i]);
      }
      s.detached[i] = s.detached.back();
      s.detached.pop_back();
    } else {
      ++i;
    }
  }
}

// What a multi-request call reports for a request: MPI_ERR_IN_STATUS with the class in the
// status, or the class itself.
int WaitOne(MPI_Request* handle, MPI_Status* status, const char* function, bool block, int* flag) {
  if (*handle == MPI_REQUEST_NULL) {
    EmptyStatus(status);
    *flag = 1;
    return MPI_SUCCESS;
  }
  Request* r = state().requests.Find(*handle);
  if (r == nullptr) return BadRequest(function);
  const MPI_Comm comm = r->comm;
  if (!Poll(*r, block)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  std::string message;
  const int rc = Complete(handle, status, &message);
  if (rc != MPI_SUCCESS) return Raise(comm, rc, std::string(function) + ": " + message);
  return MPI_SUCCESS;
}

bool IsActive(MPI_Request handle) {
  if (handle == MPI_REQUEST_NULL) return false;
  Request* r = state().requests.Find(handle);
  return r != nullptr && (r->active || r->done);
}

// Multi-request completion of the requests whose `ready` entry is set: statuses, and
// MPI_ERR_IN_STATUS (raised once, on the first failed request's communicator) if any failed.
int CompleteSet(int count, MPI_Request requests[], const std::vector<int>& which,
                MPI_Status statuses[], bool compact, const char* function) {
  int failed = 0;
  MPI_Comm failed_comm = MPI_COMM_WORLD;
  std::string first_message;
  for (size_t k = 0; k < which.size(); ++k) {
    const int i = which[k];
    MPI_Status* status = statuses == MPI_STATUSES_IGNORE
                             ? MPI_STATUS_IGNORE
                             : &statuses[compact ? static_cast<int>(k) : i];
    if (requests[i] == MPI_REQUEST_NULL) {
      EmptyStatus(status);
      continue;
    }
    Request* r = state().requests.Find(requests[i]);
    const MPI_Comm comm = r->comm;
    std::string message;
    const int rc = Complete(&requests[i], status, &message);
    if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = rc;
    if (rc != MPI_SUCCESS && failed++ == 0) {
      failed_comm = comm;
      first_message = message;
    }
  }
  (void)count;
  if (failed == 0) return MPI_SUCCESS;
  return Raise(failed_comm, MPI_ERR_IN_STATUS,
               std::string(function) + ": " + std::to_string(failed) +
                   " request(s) failed (see each status's MPI_ERROR); the first: " + first_message);
}

int CheckRequests(int count, MPI_Request requests[], const char* function) {
  if (count < 0) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_COUNT,
                 std::string(function) + ": count " + std::to_string(count) + ": expected >= 0");
  }
  for (int i = 0; i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && state().requests.Find(requests[i]) == nullptr) {
      return Raise(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                   std::string(function) + ": request " + std::to_string(i) +
                       " is invalid, freed or already completed");
    }
  }
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace rft::mpi

using namespace rft::mpi;

extern "C" {

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  Comm* c = FindComm(comm);
  if (c != nullptr && IsSimpleBuiltin(datatype) && count >= 0 && tag >= 0 && dest >= 0 &&
      dest < c->size) [[likely]] {
    const int rc = rft_send(buf, static_cast<size_t>(count) * SimpleBuiltinSize(datatype), RFT_BYTE,
                            dest, tag, c->rft);
    if (rc == RFT_SUCCESS) [[likely]]
      return MPI_SUCCESS;
    return RaiseRft(comm, "MPI_Send", rc);
  }
  MPI_Request request;
  if (int rc = PostSend(buf, count, datatype, dest, tag, comm, &request, "MPI_Send"); rc) return rc;
  return PMPI_Wait(&request, MPI_STATUS_IGNORE);
}

// Synchronous and ready modes are carried as standard sends (docs/mpi.md: a standard send of
// rft may complete before the matching receive starts, so Ssend is not yet synchronous).
int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
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
  Request* r = s.requests.Find(inner);
  r->scratch = std::move(copy);  // a vector's move keeps its buffer: the send still reads it
  s.bsend_in_use += bytes + MPI_BSEND_OVERHEAD;
  s.detached.push_back(inner);
  *request = ProcNullRequest(comm);  // the buffered send is complete for the program
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
      source < c->size && source >= MPI_ANY_SOURCE && tag >= MPI_ANY_TAG) [[likely]] {
    rft_status_t st;
    const int rc = rft_recv(buf, static_cast<size_t>(count) * SimpleBuiltinSize(datatype), RFT_BYTE,
                            ToRftSource(source), ToRftTag(tag), c->rft, &st);
    if (rc == RFT_SUCCESS || rc == RFT_ERR_TRUNCATE) FillStatus(status, st, MPI_UNDEFINED);
    if (rc == RFT_SUCCESS) [[likely]]
      return MPI_SUCCESS;
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
  return PostSend(buf, count, datatype, dest, tag, comm, request, "MPI_Issend");
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
  if (c == nullptr) return BadCommArg(comm, "MPI_Probe");
  if (int rc = CheckTagArg(tag, true, "MPI_Probe", comm); rc) return rc;
  if (int rc = CheckRankArg(*c, source, true, "MPI_Probe", comm); rc) return rc;
  if (source == MPI_PROC_NULL) {
    EmptyStatus(status);
    if (status != MPI_STATUS_IGNORE) status->MPI_SOURCE = MPI_PROC_NULL;
    return MPI_SUCCESS;
  }
  rft_status_t st;
  const int rc = rft_probe(ToRftSource(source), ToRftTag(tag), c->rft, &st);
  if (rc != RFT_SUCCESS) {
    return RaiseRft(comm, "MPI_Probe",
                    rc == RFT_ERR_PROC_FAILED_PENDING ? RFT_ERR_PROC_FAILED : rc);
  }
  FillStatus(status, st, MPI_UNDEFINED);
  return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadCommArg(comm, "MPI_Iprobe");
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
  if (rc != RFT_SUCCESS) {
    // ULFM (as Open MPI): a probe has no request to keep pending, so PROC_FAILED.
    return RaiseRft(comm, "MPI_Iprobe",
                    rc == RFT_ERR_PROC_FAILED_PENDING ? RFT_ERR_PROC_FAILED : rc);
  }
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
                          MPI_Comm comm, MPI_Request* request, const char* function) {
  Comm* c = FindComm(comm);
  if (int rc = CheckMessageArgs(c, comm, count, datatype, dest, tag, false, function); rc) {
    return rc;
  }
  Request r;
  r.comm = comm;
  r.persistent = true;
  r.active = false;
  r.start = [=](Request& self) {
    MPI_Request posted;
    const int rc = PostSend(buf, count, datatype, dest, tag, comm, &posted, "MPI_Start");
    if (rc != MPI_SUCCESS) return rc;
    Request* inner = state().requests.Find(posted);
    self.rft = inner->rft;
    self.done = inner->done;
    self.done_status = inner->done_status;
    self.scratch = std::move(inner->scratch);
    inner->rft = RFT_REQUEST_NULL;
    state().requests.Remove(posted);
    return MPI_SUCCESS;
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
  return PersistentSend(buf, count, datatype, dest, tag, comm, request, "MPI_Ssend_init");
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
  r.start = [=](Request& self) {
    MPI_Request posted;
    const int rc = PostReceive(buf, count, datatype, source, tag, comm, &posted, "MPI_Start");
    if (rc != MPI_SUCCESS) return rc;
    Request* inner = state().requests.Find(posted);
    self.rft = inner->rft;
    self.done = inner->done;
    self.done_status = inner->done_status;
    self.scratch = std::move(inner->scratch);
    self.finish = std::move(inner->finish);
    inner->rft = RFT_REQUEST_NULL;
    state().requests.Remove(posted);
    return MPI_SUCCESS;
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
  auto start = r->start;  // PostSend may grow the table: keep the function, find r again
  Request copy_holder;
  const int rc = start(copy_holder);
  r = state().requests.Find(*request);
  if (rc != MPI_SUCCESS) return rc;
  r->rft = copy_holder.rft;
  r->done = copy_holder.done;
  r->done_status = copy_holder.done_status;
  r->done_error = RFT_SUCCESS;
  r->scratch = std::move(copy_holder.scratch);
  if (copy_holder.finish) r->finish = std::move(copy_holder.finish);
  r->active = true;
  return MPI_SUCCESS;
}

int PMPI_Startall(int count, MPI_Request requests[]) {
  for (int i = 0; i < count; ++i) {
    if (int rc = PMPI_Start(&requests[i]); rc) return rc;
  }
  return MPI_SUCCESS;
}

// ---- Completion ----
int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  int flag;
  PollDetached();
  return WaitOne(request, status, "MPI_Wait", true, &flag);
}

int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  PollDetached();
  return WaitOne(request, status, "MPI_Test", false, flag);
}

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (int rc = CheckRequests(count, requests, "MPI_Waitall"); rc) return rc;
  PollDetached();
  std::vector<int> which;
  for (int i = 0; i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL) Poll(*state().requests.Find(requests[i]), true);
    which.push_back(i);
  }
  return CompleteSet(count, requests, which, statuses, false, "MPI_Waitall");
}

int PMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (int rc = CheckRequests(count, requests, "MPI_Testall"); rc) return rc;
  PollDetached();
  bool all = true;
  for (int i = 0; i < count; ++i) {
    if (requests[i] != MPI_REQUEST_NULL && !Poll(*state().requests.Find(requests[i]), false)) {
      all = false;
    }
  }
  *flag = all;
  if (!all) return MPI_SUCCESS;  // MPI: none completes unless all do
  std::vector<int> which;
  for (int i = 0; i < count; ++i) which.push_back(i);
  return CompleteSet(count, requests, which, statuses, false, "MPI_Testall");
}

static int AnyDone(int count, MPI_Request requests[], bool block, int* index, int* flag,
                   MPI_Status* status, const char* function) {
  if (int rc = CheckRequests(count, requests, function); rc) return rc;
  PollDetached();
  while (true) {
    bool any_active = false;
    for (int i = 0; i < count; ++i) {
      if (!IsActive(requests[i])) continue;
      any_active = true;
      if (Poll(*state().requests.Find(requests[i]), false)) {
        *index = i;
        *flag = 1;
        int ignored;
        return WaitOne(&requests[i], status, function, false, &ignored);
      }
    }
    if (!any_active) {
      *index = MPI_UNDEFINED;
      *flag = 1;
      EmptyStatus(status);
      return MPI_SUCCESS;
    }
    if (!block) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    // Block in rft until one of the pending rft requests completes.
    std::vector<rft_request_t> inner;
    std::vector<int> at;
    for (int i = 0; i < count; ++i) {
      if (!IsActive(requests[i])) continue;
      Request* r = state().requests.Find(requests[i]);
      if (r->rft != RFT_REQUEST_NULL) {
        inner.push_back(r->rft);
        at.push_back(i);
      }
    }
    int which = RFT_UNDEFINED;
    rft_status_t st{};
    const int rc = rft_waitany(static_cast<int>(inner.size()), inner.data(), &which, &st);
    if (which != RFT_UNDEFINED && which >= 0) {
      Request* r = state().requests.Find(requests[at[which]]);
      r->done = true;
      r->done_error = rc;
      r->done_status = st;
      r->rft = inner[which];  // RFT_REQUEST_NULL once rft released it
      if (rc == RFT_ERR_PROC_FAILED_PENDING)
        r->rft = inner[which];
      else
        r->rft = RFT_REQUEST_NULL;
    }
  }
}

int PMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  int flag;
  return AnyDone(count, requests, true, index, &flag, status, "MPI_Waitany");
}

int PMPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  return AnyDone(count, requests, false, index, flag, status, "MPI_Testany");
}

static int SomeDone(int count, MPI_Request requests[], bool block, int* outcount, int indices[],
                    MPI_Status statuses[], const char* function) {
  if (int rc = CheckRequests(count, requests, function); rc) return rc;
  std::vector<int> which;
  bool any_active = false;
  for (int i = 0; i < count; ++i) {
    if (!IsActive(requests[i])) continue;
    any_active = true;
    if (Poll(*state().requests.Find(requests[i]), false)) which.push_back(i);
  }
  if (!any_active) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (which.empty() && block) {
    int index, flag;
    MPI_Status status;
    const int rc = AnyDone(count, requests, true, &index, &flag, &status, function);
    *outcount = 1;
    indices[0] = index;
    if (statuses != MPI_STATUSES_IGNORE) {
      statuses[0] = status;
      statuses[0].MPI_ERROR = rc;
    }
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_IN_STATUS;
  }
  *outcount = static_cast<int>(which.size());
  for (size_t k = 0; k < which.size(); ++k) indices[k] = which[k];
  return CompleteSet(count, requests, which, statuses, true, function);
}

int PMPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  return SomeDone(incount, requests, true, outcount, indices, statuses, "MPI_Waitsome");
}

int PMPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                  MPI_Status statuses[]) {
  return SomeDone(incount, requests, false, outcount, indices, statuses, "MPI_Testsome");
}

int PMPI_Cancel(MPI_Request* request) {
  Request* r = state().requests.Find(*request);
  if (r == nullptr) return BadRequest("MPI_Cancel");
  if (r->rft == RFT_REQUEST_NULL) return MPI_SUCCESS;  // complete already: nothing to cancel
  const int rc = rft_cancel(&r->rft);
  // rft cancels receives; a send that cannot be cancelled completes normally (MPI allows it).
  if (rc != RFT_SUCCESS && rc != RFT_ERR_ARG) return RaiseRft(r->comm, "MPI_Cancel", rc);
  return MPI_SUCCESS;
}

int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  *flag = status->count_hi_and_cancelled & 1;
  return MPI_SUCCESS;
}

int PMPI_Request_free(MPI_Request* request) {
  Request* r = state().requests.Find(*request);
  if (r == nullptr) return BadRequest("MPI_Request_free");
  if (r->rft == RFT_REQUEST_NULL) {
    state().requests.Remove(*request);
  } else {
    r->persistent = false;
    state().detached.push_back(*request);
  }
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    EmptyStatus(status);
    return MPI_SUCCESS;
  }
  Request* r = state().requests.Find(request);
  if (r == nullptr) return BadRequest("MPI_Request_get_status");
  *flag = Poll(*r, false);
  if (*flag) FillStatus(status, r->done_status, MPI_UNDEFINED);
  return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  const Datatype* t = FindDatatype(datatype);
  if (t == nullptr) {
    std::string message;
    return Raise(MPI_COMM_WORLD, CheckDatatype(datatype, "MPI_Get_count", &message), message);
  }
  const MPI_Count bytes = StatusBytes(*status);
  if (t->size == 0) {
    *count = 0;
  } else {
    *count = bytes % t->size == 0 ? static_cast<int>(bytes / t->size) : MPI_UNDEFINED;
  }
  return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  const Datatype* t = FindDatatype(datatype);
  if (t == nullptr) {
    std::string message;
    return Raise(MPI_COMM_WORLD, CheckDatatype(datatype, "MPI_Get_elements", &message), message);
  }
  const MPI_Count bytes = StatusBytes(*status);
  // Basic elements: a type made of one predefined type counts in that type's size.
  const Datatype* element = t->element != MPI_DATATYPE_NULL ? FindDatatype(t->element) : nullptr;
  const MPI_Count unit = element != nullptr ? element->size : t->size;
  *count = unit == 0 ? 0 : (bytes % unit == 0 ? bytes / unit : MPI_UNDEFINED);
  return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  MPI_Count n = 0;
  const int rc = PMPI_Get_elements_x(status, datatype, &n);
  *count = static_cast<int>(n);
  return rc;
}

int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  const Datatype* t = FindDatatype(datatype);
  if (t == nullptr) {
    std::string message;
    return Raise(MPI_COMM_WORLD, CheckDatatype(datatype, "MPI_Status_set_elements", &message),
                 message);
  }
  SetStatusBytes(status, count * t->size);
  return MPI_SUCCESS;
}

int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
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
RFT_MPI_ALIAS(Wait)
RFT_MPI_ALIAS(Test)
RFT_MPI_ALIAS(Waitall)
RFT_MPI_ALIAS(Testall)
RFT_MPI_ALIAS(Waitany)
RFT_MPI_ALIAS(Testany)
RFT_MPI_ALIAS(Waitsome)
RFT_MPI_ALIAS(Testsome)
RFT_MPI_ALIAS(Cancel)
RFT_MPI_ALIAS(Test_cancelled)
RFT_MPI_ALIAS(Request_free)
RFT_MPI_ALIAS(Request_get_status)
RFT_MPI_ALIAS(Get_count)
RFT_MPI_ALIAS(Get_elements)
RFT_MPI_ALIAS(Get_elements_x)
RFT_MPI_ALIAS(Status_set_elements)
RFT_MPI_ALIAS(Status_set_cancelled)
