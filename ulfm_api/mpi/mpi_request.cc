// Requests: completion (wait and test in every form), cancel, free, statuses and counts.
//
// A request rft has completed before MPI may complete it (Testall with others pending) keeps
// rft's outcome until then.
#include <string.h>

#include <algorithm>
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

int BadRequest(const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_REQUEST,
               std::string(function) + ": invalid, freed or already completed request handle");
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

// The shared request of the sends that left at once (State::sent): complete, kept.
int CompleteSent(MPI_Request* handle, MPI_Status* status) {
  FillStatus(status, rft_status_t{}, MPI_UNDEFINED);
  *handle = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

// MPI's completion of a request that Poll found done: the finish step, the status, and the
// request freed (or made inactive, when persistent). Returns the MPI class and, for an error,
// the message in *message. The caller raises it: after this the table may change.
int Complete(MPI_Request* handle, MPI_Status* status, std::string* message) {
  if (*handle == state().sent) return CompleteSent(handle, status);
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
    if (!r->shared) [[likely]]
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
        s.bsend_in_use -= r->bsend_charge;  // 0 for a freed request that was no Bsend
        s.requests.Remove(s.detached[i]);
      }
      s.detached[i] = s.detached.back();
      s.detached.pop_back();
    } else {
      ++i;
    }
  }
}

void WaitDetached(MPI_Comm comm) {
  State& s = state();
  const auto pending_on = [&s, comm] {
    return std::any_of(s.detached.begin(), s.detached.end(), [&s, comm](MPI_Request handle) {
      const Request* r = s.requests.Find(handle);
      return r != nullptr && r->comm == comm;
    });
  };
  for (PollDetached(); pending_on(); PollDetached()) {
    for (MPI_Request handle : s.detached) {
      Request* r = s.requests.Find(handle);
      if (r != nullptr && r->comm == comm) {
        Poll(*r, true);
        break;
      }
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
  std::string first_message, message;
  const MPI_Request sent = state().sent;
  for (size_t k = 0; k < which.size(); ++k) {
    const int i = which[k];
    MPI_Status* status = statuses == MPI_STATUSES_IGNORE
                             ? MPI_STATUS_IGNORE
                             : &statuses[compact ? static_cast<int>(k) : i];
    if (requests[i] == MPI_REQUEST_NULL) {
      EmptyStatus(status);
      continue;
    }
    if (requests[i] == sent) {  // a window of small sends: most are this one
      CompleteSent(&requests[i], status);
      if (status != MPI_STATUS_IGNORE) status->MPI_ERROR = MPI_SUCCESS;
      continue;
    }
    Request* r = state().requests.Find(requests[i]);
    const MPI_Comm comm = r->comm;
    message.clear();
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

}  // namespace rft::mpi

using namespace rft::mpi;

extern "C" {

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
  State& s = state();
  if (count < 0) [[unlikely]]
    return CheckRequests(count, requests, "MPI_Waitall");
  if (!s.detached.empty()) [[unlikely]]
    PollDetached();
  // One rft_waitall over the requests rft still has: it progresses them together, where one
  // rft_wait after another pays a call and a pass per request (a window of 64 sends). The
  // handles are checked on the way.
  s.wait_inner.resize(static_cast<size_t>(count));
  bool any = false;
  for (int i = 0; i < count; ++i) {
    s.wait_inner[i] = RFT_REQUEST_NULL;
    if (requests[i] == MPI_REQUEST_NULL || requests[i] == s.sent) continue;
    Request* r = s.requests.Find(requests[i]);
    if (r == nullptr) [[unlikely]]
      return CheckRequests(count, requests, "MPI_Waitall");  // names the bad one
    if (r->active && !r->done && r->rft != RFT_REQUEST_NULL) {
      s.wait_inner[i] = r->rft;
      any = true;
    }
  }
  if (any) {
    s.wait_statuses.resize(static_cast<size_t>(count));
    s.wait_posted = s.wait_inner;  // which ones rft_waitall was given (capacity kept)
    const std::vector<rft_request_t>& posted = s.wait_posted;
    (void)rft_waitall(count, s.wait_inner.data(), s.wait_statuses.data());
    for (int i = 0; i < count; ++i) {
      if (posted[i] == RFT_REQUEST_NULL) continue;
      Request* r = s.requests.Find(requests[i]);
      if (s.wait_inner[i] == RFT_REQUEST_NULL) {  // rft completed and released it
        r->rft = RFT_REQUEST_NULL;
        r->done = true;
        r->done_error = s.wait_statuses[i].error;
        r->done_status = s.wait_statuses[i];
      } else {
        Poll(*r, true);  // still held (PENDING), or the call refused: on its own
      }
    }
  }
  s.wait_which.resize(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) s.wait_which[i] = i;
  return CompleteSet(count, requests, s.wait_which, statuses, false, "MPI_Waitall");
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
    if (which == RFT_UNDEFINED || which < 0) {
      // Nothing completed: an error of the call itself (never a wait without end).
      if (rc != RFT_SUCCESS) return RaiseRft(MPI_COMM_WORLD, function, rc);
      continue;
    }
    Request* r = state().requests.Find(requests[at[which]]);
    r->done = true;
    r->done_error = rc;
    r->done_status = st;
    r->rft = inner[which];  // rft nulls one it completed; one held PENDING stays
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
    if (!r->shared) state().requests.Remove(*request);
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
