// ULFM: revoke, shrink, agree and the failure acknowledgement calls, over rft's (docs/api.md
// gives their semantics; docs/mpi.md how they differ from Open MPI's and MPICH's).
#include <memory>
#include <string>

#include "ulfm_api/mpi/mpi_internal.h"

using namespace rft::mpi;

namespace {

Comm* CommOrRaise(MPI_Comm comm, const char* function, int* rc) {
  Comm* c = FindComm(comm);
  if (c == nullptr) *rc = BadComm(comm, function);
  return c;
}

int Result(MPI_Comm comm, const char* function, int rc) {
  return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, function, rc);
}

}  // namespace

extern "C" {

int PMPIX_Comm_revoke(MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_revoke", &rc);
  if (c == nullptr) return rc;
  return Result(comm, "MPIX_Comm_revoke", rft_comm_revoke(c->rft));
}

int PMPIX_Comm_is_revoked(MPI_Comm comm, int* flag) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_is_revoked", &rc);
  if (c == nullptr) return rc;
  return Result(comm, "MPIX_Comm_is_revoked", rft_comm_is_revoked(c->rft, flag));
}

int PMPIX_Comm_shrink(MPI_Comm comm, MPI_Comm* newcomm) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_shrink", &rc);
  if (c == nullptr) return rc;
  rft_comm_t made = RFT_COMM_NULL;
  rc = rft_comm_shrink(c->rft, &made);
  if (rc != RFT_SUCCESS) {
    *newcomm = MPI_COMM_NULL;
    return RaiseRft(comm, "MPIX_Comm_shrink", rc);
  }
  *newcomm = NewComm(made, c);
  return MPI_SUCCESS;
}

int PMPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_ishrink", &rc);
  if (c == nullptr) return rc;
  // rft writes the new communicator when the request completes: it needs a place that lives
  // until then, and the MPI handle is made from it at completion.
  auto made = std::make_shared<rft_comm_t>(RFT_COMM_NULL);
  Request r;
  r.comm = comm;
  rc = rft_comm_ishrink(c->rft, made.get(), &r.rft);
  if (rc != RFT_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, "MPIX_Comm_ishrink", rc);
  }
  *newcomm = MPI_COMM_NULL;
  Comm parent_settings;
  parent_settings.errhandler = c->errhandler;
  r.finish = [made, newcomm, parent_settings](Request&, const rft_status_t&) {
    *newcomm = *made == RFT_COMM_NULL ? MPI_COMM_NULL : NewComm(*made, &parent_settings);
    return MPI_SUCCESS;
  };
  *request = NewRequest(std::move(r));
  return MPI_SUCCESS;
}

int PMPIX_Comm_agree(MPI_Comm comm, int* flag) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_agree", &rc);
  if (c == nullptr) return rc;
  return Result(comm, "MPIX_Comm_agree", rft_comm_agree(c->rft, flag));
}

int PMPIX_Comm_iagree(MPI_Comm comm, int* flag, MPI_Request* request) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_iagree", &rc);
  if (c == nullptr) return rc;
  Request r;
  r.comm = comm;
  rc = rft_comm_iagree(c->rft, flag, &r.rft);
  if (rc != RFT_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return RaiseRft(comm, "MPIX_Comm_iagree", rc);
  }
  *request = NewRequest(std::move(r));
  return MPI_SUCCESS;
}

int PMPIX_Comm_failure_ack(MPI_Comm comm) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_failure_ack", &rc);
  if (c == nullptr) return rc;
  return Result(comm, "MPIX_Comm_failure_ack", rft_comm_failure_ack(c->rft));
}

int PMPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group* failedgrp) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_failure_get_acked", &rc);
  if (c == nullptr) return rc;
  rft_group_t g = RFT_GROUP_NULL;
  rc = rft_comm_failure_get_acked(c->rft, &g);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPIX_Comm_failure_get_acked", rc);
  *failedgrp = NewGroup(g);
  return MPI_SUCCESS;
}

int PMPIX_Comm_get_failed(MPI_Comm comm, MPI_Group* failedgrp) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_get_failed", &rc);
  if (c == nullptr) return rc;
  rft_group_t g = RFT_GROUP_NULL;
  rc = rft_comm_get_failed(c->rft, &g);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPIX_Comm_get_failed", rc);
  *failedgrp = NewGroup(g);
  return MPI_SUCCESS;
}

int PMPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int* num_acked) {
  int rc = MPI_SUCCESS;
  Comm* c = CommOrRaise(comm, "MPIX_Comm_ack_failed", &rc);
  if (c == nullptr) return rc;
  return Result(comm, "MPIX_Comm_ack_failed", rft_comm_ack_failed(c->rft, num_to_ack, num_acked));
}

}  // extern "C"

RFT_MPIX_ALIAS(Comm_revoke)
RFT_MPIX_ALIAS(Comm_is_revoked)
RFT_MPIX_ALIAS(Comm_shrink)
RFT_MPIX_ALIAS(Comm_ishrink)
RFT_MPIX_ALIAS(Comm_agree)
RFT_MPIX_ALIAS(Comm_iagree)
RFT_MPIX_ALIAS(Comm_failure_ack)
RFT_MPIX_ALIAS(Comm_failure_get_acked)
RFT_MPIX_ALIAS(Comm_get_failed)
RFT_MPIX_ALIAS(Comm_ack_failed)
