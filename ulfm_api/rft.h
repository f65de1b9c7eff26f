/* rft.h: the C interface of rft, fault-tolerant communication with ULFM semantics.
 *
 * Plain C99 (also valid C++): opaque handles, int error codes (rft_error.h's classes). A program
 * calls rft_init first and rft_finalize last, from one thread; every other call is made from that
 * thread. docs/api.md is the guide; this header is the reference.
 *
 * Errors: every function returns RFT_SUCCESS or an error class. Calls on a communicator (and on
 * requests, which belong to one) first hand an error to the communicator's error handler
 * (rft_comm_set_errhandler): with RFT_ERRORS_RETURN the code comes back to the caller and
 * rft_last_error_message() says what went wrong, naming the bad value or the failed process.
 * COMM_WORLD and COMM_SELF (and a replacement's parent communicator) start with the handler
 * RFT_INITIAL_ERRHANDLER names, MPI-4's mpi_initial_errhandler (rftrun --initial-errhandler):
 * RFT_ERRORS_ARE_FATAL by default, as MPI programs expect; a fault-tolerant program sets
 * RFT_ERRORS_RETURN. */
#ifndef RFT_H_
#define RFT_H_

#include <stddef.h>

#include "base/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Handles ---- */
typedef struct rft_comm_s* rft_comm_t;
typedef struct rft_group_s* rft_group_t;
typedef struct rft_request_s* rft_request_t;
typedef struct rft_errhandler_s* rft_errhandler_t;

extern struct rft_comm_s rft_comm_world_object;
extern struct rft_comm_s rft_comm_self_object;
#define RFT_COMM_WORLD (&rft_comm_world_object)
#define RFT_COMM_SELF (&rft_comm_self_object)
#define RFT_COMM_NULL ((rft_comm_t)0)
#define RFT_GROUP_NULL ((rft_group_t)0)
/* The group with no members (predefined: never freed). */
extern struct rft_group_s rft_group_empty_object;
#define RFT_GROUP_EMPTY (&rft_group_empty_object)
#define RFT_REQUEST_NULL ((rft_request_t)0)

extern struct rft_errhandler_s rft_errors_return_object;
extern struct rft_errhandler_s rft_errors_are_fatal_object;
extern struct rft_errhandler_s rft_errors_abort_object;
/* The error comes back to the caller. */
#define RFT_ERRORS_RETURN (&rft_errors_return_object)
/* MPI-4's meanings: every process of the job is aborted, with the message printed (an error
 * with no communicator to report it on aborts the calling process only). */
#define RFT_ERRORS_ARE_FATAL (&rft_errors_are_fatal_object)
/* rft_abort(comm, error): the processes of the communicator's group, without the message. */
#define RFT_ERRORS_ABORT (&rft_errors_abort_object)

/* ---- Constants ---- */
#define RFT_ANY_SOURCE (-1)
#define RFT_ANY_TAG (-1)
#define RFT_UNDEFINED (-32766)
/* The root argument of a collective on an intercommunicator: RFT_ROOT at the root, RFT_PROC_NULL
 * at the other members of its group (the other group passes the root's rank in the root's
 * group). */
#define RFT_ROOT (-3)
#define RFT_PROC_NULL (-2)
/* rft_comm_compare, rft_group_compare */
#define RFT_IDENT 0
#define RFT_CONGRUENT 1
#define RFT_SIMILAR 2
#define RFT_UNEQUAL 3

/* Fault levels, asked for at rft_init like a thread level. */
#define RFT_FT_NONE 0   /* any failure of a process aborts the job */
#define RFT_FT_NOTIFY 1 /* failures are returned as errors (ULFM) */
#define RFT_FT_ASYNC 2  /* also rft_set_failure_callback's callback, on the control thread */

/* What a completed operation reports. */
typedef struct rft_status {
  int source;    /* receives: the sender's rank in the communicator */
  int tag;       /* receives: the message's tag */
  int error;     /* this request's error class (multi-request calls fill it per request) */
  int cancelled; /* non-zero: the receive was cancelled */
  size_t count;  /* bytes received (or, for a probe, the message's length) */
} rft_status_t;
#define RFT_STATUS_IGNORE ((rft_status_t*)0)
#define RFT_STATUSES_IGNORE ((rft_status_t*)0)

/* Element types and reduction operators of the collectives. */
typedef enum rft_datatype {
  RFT_BYTE = 0,
  RFT_CHAR,
  RFT_INT8,
  RFT_UINT8,
  RFT_INT16,
  RFT_UINT16,
  RFT_INT32,
  RFT_UINT32,
  RFT_INT64,
  RFT_UINT64,
  RFT_INT,
  RFT_LONG,
  RFT_FLOAT,
  RFT_DOUBLE,
  RFT_DATATYPE_COUNT, /* not a type */
  /* Not types either: they give the enum the range of an int, so that a bad value a caller
   * passes is refused with RFT_ERR_ARG instead of being undefined behaviour in C++. */
  RFT_DATATYPE_RANGE_MIN_ = -2147483647 - 1,
  RFT_DATATYPE_RANGE_MAX_ = 2147483647
} rft_datatype_t;

typedef enum rft_op {
  RFT_SUM = 0,
  RFT_PROD,
  RFT_MIN,
  RFT_MAX,
  RFT_LAND,
  RFT_LOR,
  RFT_BAND,
  RFT_BOR,
  RFT_BXOR,
  RFT_OP_COUNT,                        /* not an operator */
  RFT_OP_RANGE_MIN_ = -2147483647 - 1, /* the range of an int, as for rft_datatype_t */
  RFT_OP_RANGE_MAX_ = 2147483647
} rft_op_t;

/* ---- Start and end ---- */
/* Joins the job (started by rftrun or another PMIx launcher). `argc`/`argv` may be NULL.
 * `provided` gets the fault level granted (the one asked for). Collective over the job. */
int rft_init(int* argc, char*** argv, int requested_ft_level, int* provided);
/* Ends this process's part. With RFT_FINALIZE_WARNINGS (default on) it first takes part in one
 * agreement over world's live members (the warnings report, rft_warning), so it waits for the
 * live processes to finalize too and returns after any number of failures; with it off it never
 * waits for other processes. */
int rft_finalize(void);
int rft_initialized(int* flag);
/* The fault level granted at rft_init. */
int rft_query_ft_level(int* level);
int rft_finalized(int* flag);
/* Kills the processes of `comm`'s group through the launcher; the others see them failed. Never
 * returns: if the launcher refuses, the group's processes on this node are killed by process id
 * and this one exits with `error_code` (1 for 0). */
int rft_abort(rft_comm_t comm, int error_code);
/* RFT_FT_ASYNC: `callback(job_rank, user_data)` runs on the control thread for each failure.
 * Set before rft_init. */
typedef void (*rft_failure_callback_t)(int job_rank, void* user_data);
int rft_set_failure_callback(rft_failure_callback_t callback, void* user_data);
/* What the most recent failed call of this thread said (never NULL; "" before any failure; a
 * success leaves it as it was). */
const char* rft_last_error_message(void);
/* Raises a warning on this process: logged here at once and counted. At rft_finalize the counts
 * are gathered (RFT_FINALIZE_WARNINGS, default on) and the lowest live rank prints one line per
 * rank that raised any, "rft: rank R raised N warning(s); the first: MESSAGE", so a warning seen
 * on one process of many is not lost. RFT_ERR_ARG for a NULL message. */
int rft_warning(const char* message);

/* ---- Communicators ---- */
int rft_comm_rank(rft_comm_t comm, int* rank);
int rft_comm_size(rft_comm_t comm, int* size);
int rft_comm_dup(rft_comm_t comm, rft_comm_t* newcomm);
/* `color` >= 0 or RFT_UNDEFINED (then *newcomm = RFT_COMM_NULL). */
int rft_comm_split(rft_comm_t comm, int color, int key, rft_comm_t* newcomm);
/* Collective over `comm`; RFT_COMM_NULL at the processes outside `group`. Of an
 * intercommunicator, each group passes a subgroup of its own group: an intercommunicator between
 * the two (RFT_COMM_NULL everywhere when either is empty). */
int rft_comm_create(rft_comm_t comm, rft_group_t group, rft_comm_t* newcomm);
/* MPI's Comm_create_group: collective over the members of `group` only (a subset of `comm`'s
 * group that contains the caller; the other members of `comm` need not call), which form the new
 * communicator in the group's order. Only a failure among them fails it (RFT_ERR_PROC_FAILED);
 * RFT_ERR_REVOKED on a revoked `comm`. `tag` (>= 0; only its low 30 bits count) tells apart
 * creations that overlapping groups of one `comm` run at the same time. */
int rft_comm_create_group(rft_comm_t comm, rft_group_t group, int tag, rft_comm_t* newcomm);
int rft_comm_free(rft_comm_t* comm);
/* MPI's Comm_disconnect: collective over `comm`'s live members (both groups of an
 * intercommunicator; e.g. the one rft_comm_spawn or rft_comm_get_parent gives). Waits until the
 * requests given up on `comm` (rft_request_free) have completed and every member is past its
 * communication on it (an agreement, so it also works on a revoked `comm` and with failed
 * members), then frees it: *comm becomes RFT_COMM_NULL whatever the outcome. The outcome is the
 * same at every member that returns: RFT_ERR_PROC_FAILED when a member failed that not every
 * member had acknowledged (rft_comm_ack_failed). RFT_ERR_ARG for COMM_WORLD and COMM_SELF. */
int rft_comm_disconnect(rft_comm_t* comm);
int rft_comm_compare(rft_comm_t a, rft_comm_t b, int* result);
int rft_comm_group(rft_comm_t comm, rft_group_t* group);
/* A communicator's name, local to this process (for messages; at most RFT_MAX_OBJECT_NAME - 1
 * bytes): "COMM_WORLD", "dup of COMM_WORLD", ... until set. get_name writes it NUL-terminated
 * into `name` (RFT_MAX_OBJECT_NAME bytes) and its length into `*length`. */
#define RFT_MAX_OBJECT_NAME 128
int rft_comm_set_name(rft_comm_t comm, const char* name);
int rft_comm_get_name(rft_comm_t comm, char* name, int* length);

/* ---- Intercommunicators (docs/api.md, "Intercommunicators") ----
 * Two disjoint groups: rft_comm_rank, rft_comm_size and rft_comm_group give the caller's own
 * (local) group; point-to-point ranks name the other (remote) group. Collectives have MPI's
 * intercommunicator meanings (barrier, bcast, reduce, allreduce, allgather, gather, scatter,
 * alltoall, the "v" forms, and their non-blocking forms; a "v" form's arrays have one entry per
 * member of the remote group, and RFT_IN_PLACE is refused with RFT_ERR_ARG). ULFM
 * operations span both groups: a revocation interrupts both, an agreement is uniform over both,
 * get_failed and ack_failed cover both, shrink gives an intercommunicator of the survivors.
 * dup gives an intercommunicator; split gives one between the two groups' members of each
 * colour (RFT_COMM_NULL where the other group has none of it); create, create_group, replace
 * and spawn refuse one. */
/* Collective over `local` (an intracommunicator) whose rank `local_leader` and the rank
 * `remote_leader` of `peer` (significant at the local leader only) lead the two groups; the
 * leaders exchange over `peer` with `tag` (>= 0). The groups must be disjoint. */
int rft_intercomm_create(rft_comm_t local, int local_leader, rft_comm_t peer, int remote_leader,
                         int tag, rft_comm_t* newcomm);
/* An intracommunicator of both groups; the group whose members pass `high` non-zero comes last
 * (when both pass the same, the group of the lower-ranked leader comes first). */
int rft_intercomm_merge(rft_comm_t inter, int high, rft_comm_t* newcomm);
/* `*flag` non-zero for an intercommunicator. */
int rft_comm_test_inter(rft_comm_t comm, int* flag);
/* The remote group's size and group; RFT_ERR_ARG on an intracommunicator. */
int rft_comm_remote_size(rft_comm_t comm, int* size);
int rft_comm_remote_group(rft_comm_t comm, rft_group_t* group);

/* ---- Groups ---- */
int rft_group_size(rft_group_t group, int* size);
/* RFT_UNDEFINED when the calling process is not a member. */
int rft_group_rank(rft_group_t group, int* rank);
int rft_group_translate_ranks(rft_group_t a, int n, const int* ranks_a, rft_group_t b,
                              int* ranks_b);
int rft_group_union(rft_group_t a, rft_group_t b, rft_group_t* result);
int rft_group_intersection(rft_group_t a, rft_group_t b, rft_group_t* result);
int rft_group_difference(rft_group_t a, rft_group_t b, rft_group_t* result);
int rft_group_incl(rft_group_t group, int n, const int* ranks, rft_group_t* result);
int rft_group_excl(rft_group_t group, int n, const int* ranks, rft_group_t* result);
/* MPI's range forms: each triplet (first, last, stride) names first, first + stride, ... up to
 * last (stride != 0, negative to count down); first and last are ranks of `group`. */
int rft_group_range_incl(rft_group_t group, int n, const int ranges[][3], rft_group_t* result);
int rft_group_range_excl(rft_group_t group, int n, const int ranges[][3], rft_group_t* result);
int rft_group_compare(rft_group_t a, rft_group_t b, int* result);
int rft_group_free(rft_group_t* group);

/* ---- Point-to-point (counts are elements of `type`) ---- */
int rft_send(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
             rft_comm_t comm);
int rft_recv(void* buffer, size_t count, rft_datatype_t type, int source, int tag, rft_comm_t comm,
             rft_status_t* status);
int rft_isend(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
              rft_comm_t comm, rft_request_t* request);
int rft_irecv(void* buffer, size_t count, rft_datatype_t type, int source, int tag, rft_comm_t comm,
              rft_request_t* request);
/* Sends at once when that needs neither a wait nor a request: a small message to a peer with
 * nothing queued before it (*sent = 1, and the buffer may be reused). Otherwise *sent = 0,
 * nothing was sent, and rft_isend or rft_send is the way (they also report a failed peer or a
 * revoked communicator, which leave *sent = 0 here). Never waits. For senders bound by the
 * message rate: a request costs more than the message (rft's MPI_Isend goes this way first). */
int rft_send_now(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
                 rft_comm_t comm, int* sent);
/* Synchronous sends (MPI's Ssend and Issend): complete only once the receiver has matched the
 * message with a receive, whatever its size (a standard send of a small message completes as
 * soon as it is copied out). They travel as a rendezvous, so a small one costs a round trip
 * more than rft_send. */
int rft_ssend(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
              rft_comm_t comm);
int rft_issend(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
               rft_comm_t comm, rft_request_t* request);
int rft_sendrecv(const void* send, size_t send_count, rft_datatype_t send_type, int dest,
                 int send_tag, void* receive, size_t receive_count, rft_datatype_t receive_type,
                 int source, int receive_tag, rft_comm_t comm, rft_status_t* status);
int rft_iprobe(int source, int tag, rft_comm_t comm, int* flag, rft_status_t* status);
int rft_probe(int source, int tag, rft_comm_t comm, rft_status_t* status);
/* A completed request is released and its handle set to RFT_REQUEST_NULL; a null handle is
 * complete with an empty status. */
int rft_wait(rft_request_t* request, rft_status_t* status);
int rft_test(rft_request_t* request, int* flag, rft_status_t* status);
int rft_waitall(int count, rft_request_t* requests, rft_status_t* statuses);
int rft_testall(int count, rft_request_t* requests, int* flag, rft_status_t* statuses);
/* `*index` = RFT_UNDEFINED when every handle is null. */
int rft_waitany(int count, rft_request_t* requests, int* index, rft_status_t* status);
/* `*flag` when one completed (its position in `*index`) or every handle is null (`*index`
 * RFT_UNDEFINED); a held ANY_SOURCE receive is RFT_ERR_PROC_FAILED_PENDING with its index. */
int rft_testany(int count, rft_request_t* requests, int* index, int* flag, rft_status_t* status);
/* Complete every request that is done (waitsome: at least one), `indices[0..*outcount)` their
 * positions and `statuses` one per position; `*outcount` RFT_UNDEFINED when every handle is
 * null. RFT_ERR_IN_STATUS when some failed, or (nothing done) held ANY_SOURCE receives are
 * reported as PROC_FAILED_PENDING and stay active. */
int rft_waitsome(int count, rft_request_t* requests, int* outcount, int* indices,
                 rft_status_t* statuses);
int rft_testsome(int count, rft_request_t* requests, int* outcount, int* indices,
                 rft_status_t* statuses);
/* A received message's length in elements of `type` (status->count is in bytes); RFT_UNDEFINED
 * when it is not a whole number of them. */
int rft_get_count(const rft_status_t* status, rft_datatype_t type, int* count);
int rft_cancel(rft_request_t* request);
/* MPI's request free: gives the request up and sets the handle to RFT_REQUEST_NULL (copies of it
 * are stale from now on). The operation goes on and its request is released when it ends; its
 * buffer must stay untouched until the program knows by other means that it ended. A failed
 * peer or a revocation it ends with is not reported (the communicator's next operation reports
 * them); any other error (a truncated receive) goes to RFT_COMM_SELF's handler, which ends this
 * process only when fatal. RFT_ERR_ARG for RFT_REQUEST_NULL or a stale handle. */
int rft_request_free(rft_request_t* request);

/* ---- Fault tolerance (ULFM) ---- */
/* The failed processes of `comm`'s group known here, in the order learned (later calls return a
 * group with this one as its prefix). */
int rft_comm_get_failed(rft_comm_t comm, rft_group_t* failed);
/* Acknowledges the first `num_to_ack` of them (all when more); `num_acked` gets how many are
 * acknowledged now (never fewer than before). ANY_SOURCE receives then complete normally. */
int rft_comm_ack_failed(rft_comm_t comm, int num_to_ack, int* num_acked);
/* The older pair: acknowledge every failure known now; the acknowledged ones as a group. */
int rft_comm_failure_ack(rft_comm_t comm);
int rft_comm_failure_get_acked(rft_comm_t comm, rft_group_t* failed);
/* Not collective, idempotent: every live member's operations on `comm` return RFT_ERR_REVOKED. */
int rft_comm_revoke(rft_comm_t comm);
int rft_comm_is_revoked(rft_comm_t comm, int* flag);
/* Fault-tolerant agreement: `*flag` becomes the bitwise AND of the flags of `comm`'s live members
 * (members that fail during the call may or may not count), the same at every member that
 * returns; afterwards every failure in the agreed set is known here (rft_comm_get_failed).
 * RFT_ERR_PROC_FAILED, with `*flag` still set, when a member failed that not every participant
 * had acknowledged. Never RFT_ERR_REVOKED: works on a revoked communicator. Collective over the
 * live members; a member returns as soon as it knows the outcome (early return). */
int rft_comm_agree(rft_comm_t comm, int* flag);
/* The non-blocking form: the request completes with rft_comm_agree's outcome; `flag` must stay
 * valid until then. */
int rft_comm_iagree(rft_comm_t comm, int* flag, rft_request_t* request);
/* A new communicator of `comm`'s members that are not in the agreed failed set, in `comm`'s
 * order (failures during the call are excluded too). Works on a revoked communicator; equals
 * rft_comm_dup when nothing failed. Collective over the live members. */
int rft_comm_shrink(rft_comm_t comm, rft_comm_t* newcomm);
/* Recovery by replacement: like rft_comm_shrink, agrees on the failed members, then starts one
 * process running `argv` (NULL-terminated: the program, then its arguments) for each through the
 * launcher, and builds `*newcomm` with `comm`'s size: every survivor keeps its rank, each new
 * process takes a failed member's rank. The new processes call rft_init as usual and find the
 * communicator with rft_comm_get_parent. Collective over the live members; works on a revoked
 * communicator; without failures nothing starts (a dup). RFT_ERR_PROC_FAILED when a process
 * failed during it (shrink or spawn again); RFT_ERR_ARG at every member when one passed no
 * program; RFT_ERR_OTHER when the launcher could not start them. */
int rft_comm_replace(rft_comm_t comm, const char* const argv[], rft_comm_t* newcomm);
/* MPI's Comm_spawn: `root` starts `maxprocs` processes running `command` with the arguments
 * `argv` (NULL-terminated, the program not included; NULL for none) through the launcher, and
 * every member gets `*intercomm`, an intercommunicator whose remote group is the new processes;
 * they call rft_init as usual, their RFT_COMM_WORLD holds them, and rft_comm_get_parent gives
 * them the same intercommunicator. `command`, `argv` and `maxprocs` count at the root only.
 * Collective over `comm`, which must hold every live process of the job (COMM_WORLD, or a dup or
 * shrink of it: the new processes join the job, see docs/api.md). `errcodes` (or
 * RFT_ERRCODES_IGNORE) gets one code per process started, at every member: RFT_SUCCESS, or
 * RFT_ERR_PROC_FAILED for one that died during the spawn (the call then fails so at every
 * member and at the new processes' rft_init). RFT_ERR_ARG at every member for a bad root,
 * command or maxprocs (1..RFT_MAX_SPAWN); RFT_ERR_PROC_FAILED when a member of `comm` has failed;
 * RFT_ERR_OTHER when the launcher could not start them. */
int rft_comm_spawn(rft_comm_t comm, const char* command, const char* const argv[], int maxprocs,
                   int root, rft_comm_t* intercomm, int errcodes[]);
/* MPI's Comm_spawn_multiple: as rft_comm_spawn with `count` programs, program i being
 * `maxprocs[i]` processes of `commands[i]` with the arguments `argvs[i]` (NULL-terminated, the
 * program not included; `argvs` or an entry NULL for none), all in one new RFT_COMM_WORLD:
 * program 0's processes first, then program 1's, ...; each finds its program's index with
 * rft_appnum. `errcodes` gets one code per process, in that order. Significant at the root only;
 * RFT_ERR_ARG at every member for a count below 1, an empty command, a maxprocs below 1, or
 * more than RFT_MAX_SPAWN processes in all. */
int rft_comm_spawn_multiple(rft_comm_t comm, int count, const char* const commands[],
                            const char* const* const argvs[], const int maxprocs[], int root,
                            rft_comm_t* intercomm, int errcodes[]);
/* As rft_comm_spawn_multiple, program i's processes starting in the working directory
 * `wdirs[i]` (`wdirs` or an entry NULL: the root's working directory; a relative one is
 * relative to it; MPI's "wdir" info key).
 * RFT_ERR_ARG at every member when one is not a directory at the root. */
int rft_comm_spawn_multiple_in(rft_comm_t comm, int count, const char* const commands[],
                               const char* const* const argvs[], const int maxprocs[],
                               const char* const wdirs[], int root, rft_comm_t* intercomm,
                               int errcodes[]);
/* The index of this process's program in the rft_comm_spawn_multiple that started it (MPI's
 * MPI_APPNUM); 0 in any other process. */
int rft_appnum(int* appnum);
#define RFT_ERRCODES_IGNORE ((int*)0)
#define RFT_MAX_SPAWN 65536 /* the largest maxprocs */
/* In a process started by rft_comm_replace: the communicator it took its place in; in one
 * started by rft_comm_spawn: the intercommunicator to its parents (its own RFT_COMM_WORLD holds
 * the processes started with it). RFT_COMM_NULL in any other process. The caller frees it. */
int rft_comm_get_parent(rft_comm_t* parent);
/* The non-blocking form: `*newcomm` is set when the request completes (it must stay valid until
 * then; RFT_COMM_NULL before). Other communicators may be created meanwhile: each member sets
 * aside 64 free contexts for it, and in the rare case that the members' sets share none the
 * request completes with RFT_ERR_OTHER (the blocking form has no such limit). */
int rft_comm_ishrink(rft_comm_t comm, rft_comm_t* newcomm, rft_request_t* request);
/* The guarded agreement (the check-in scheme): rft_comm_agree, but a member that has not
 * contributed `seconds` after the member waiting for it started is declared failed and killed
 * (fail-stop), so a member stuck in a loop cannot hold the others; each member returns within
 * about 1.2 * seconds + max(seconds / 10, 0.02) of its own call. `*cut_off` (if not NULL; free
 * it with rft_group_free) becomes the group of the members found failed that not every
 * participant had acknowledged: those cut off and any that died; with any, RFT_ERR_PROC_FAILED.
 * RFT_ERR_ARG for `seconds` not in (0, one year]. Always on the control thread's protocol: a
 * few tens of microseconds, not the fast path's one. */
int rft_comm_agree_deadline(rft_comm_t comm, int* flag, double seconds, rft_group_t* cut_off);
/* The check-in scheme's deadline for a phase: 20% of the time budget left, `remaining_seconds`
 * (the guarded agreement may take about 1.2 times it: the slack for the answer). 0 for a budget
 * that is not positive (then give the agreement a deadline of your own). */
double rft_agree_default_deadline(double remaining_seconds);

/* ---- Error handlers ---- */
typedef void (*rft_comm_errhandler_fn)(rft_comm_t comm, int error, const char* message,
                                       void* user_data);
int rft_comm_create_errhandler(rft_comm_errhandler_fn function, void* user_data,
                               rft_errhandler_t* handler);
int rft_errhandler_free(rft_errhandler_t* handler);
int rft_comm_set_errhandler(rft_comm_t comm, rft_errhandler_t handler);
int rft_comm_get_errhandler(rft_comm_t comm, rft_errhandler_t* handler);

/* ---- Collectives ----
 * Every member of `comm` calls the same collectives in the same order. Counts are elements of
 * `type`. The "v" forms take arrays of the communicator's size: per-member counts and
 * displacements (in elements), read at the root (gatherv, scatterv) or at every member
 * (allgatherv, alltoallv). RFT_IN_PLACE as the send buffer says the caller's data is already in
 * the receive buffer: allreduce, reduce (at the root), allgather(v) (at the caller's block),
 * gather(v) (at the root's block); alltoall(v) do not take it.
 *
 * Each collective has a non-blocking form, rft_i..., that returns at once with a request; the
 * request completes (rft_wait, rft_test, rft_waitall, ...) with the collective's outcome, its
 * status carrying only the error (a call that returns an error leaves RFT_REQUEST_NULL). It
 * cannot be cancelled, and its buffers must stay untouched until it completes. Non-blocking
 * collectives progress inside every rft call that waits or tests, whatever it waits for.
 *
 * Failures: a collective on a communicator with a known failed member returns
 * RFT_ERR_PROC_FAILED; one that learns of a failure while it runs returns RFT_ERR_PROC_FAILED
 * (not necessarily at every member: one may have finished before), and none waits forever. On
 * a revoked communicator: RFT_ERR_REVOKED. */
#define RFT_IN_PLACE ((const void*)1)
int rft_barrier(rft_comm_t comm);
int rft_bcast(void* buffer, size_t count, rft_datatype_t type, int root, rft_comm_t comm);
int rft_allreduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
                  rft_comm_t comm);
/* `receive` is used at `root` only. */
int rft_reduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
               int root, rft_comm_t comm);
/* `receive` holds size blocks of `count` elements, member r's at r * count. */
int rft_allgather(const void* send, size_t count, rft_datatype_t type, void* receive,
                  rft_comm_t comm);
int rft_allgatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                   const size_t* counts, const size_t* displacements, rft_comm_t comm);
/* At `root`, `receive` holds size blocks of `count` elements. */
int rft_gather(const void* send, size_t count, rft_datatype_t type, void* receive, int root,
               rft_comm_t comm);
int rft_gatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                const size_t* counts, const size_t* displacements, int root, rft_comm_t comm);
/* At `root`, `send` holds size blocks of `count` elements; member r receives block r. */
int rft_scatter(const void* send, void* receive, size_t count, rft_datatype_t type, int root,
                rft_comm_t comm);
int rft_scatterv(const void* send, const size_t* counts, const size_t* displacements, void* receive,
                 size_t count, rft_datatype_t type, int root, rft_comm_t comm);
/* Block r of `send` (`count` elements) goes to member r; block r of `receive` comes from it. */
int rft_alltoall(const void* send, size_t count, rft_datatype_t type, void* receive,
                 rft_comm_t comm);
int rft_alltoallv(const void* send, const size_t* send_counts, const size_t* send_displacements,
                  void* receive, const size_t* receive_counts, const size_t* receive_displacements,
                  rft_datatype_t type, rft_comm_t comm);

int rft_ibarrier(rft_comm_t comm, rft_request_t* request);
int rft_ibcast(void* buffer, size_t count, rft_datatype_t type, int root, rft_comm_t comm,
               rft_request_t* request);
int rft_iallreduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
                   rft_comm_t comm, rft_request_t* request);
int rft_ireduce(const void* send, void* receive, size_t count, rft_datatype_t type, rft_op_t op,
                int root, rft_comm_t comm, rft_request_t* request);
int rft_iallgather(const void* send, size_t count, rft_datatype_t type, void* receive,
                   rft_comm_t comm, rft_request_t* request);
int rft_iallgatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                    const size_t* counts, const size_t* displacements, rft_comm_t comm,
                    rft_request_t* request);
int rft_igather(const void* send, size_t count, rft_datatype_t type, void* receive, int root,
                rft_comm_t comm, rft_request_t* request);
int rft_igatherv(const void* send, size_t count, rft_datatype_t type, void* receive,
                 const size_t* counts, const size_t* displacements, int root, rft_comm_t comm,
                 rft_request_t* request);
int rft_iscatter(const void* send, void* receive, size_t count, rft_datatype_t type, int root,
                 rft_comm_t comm, rft_request_t* request);
int rft_iscatterv(const void* send, const size_t* counts, const size_t* displacements,
                  void* receive, size_t count, rft_datatype_t type, int root, rft_comm_t comm,
                  rft_request_t* request);
int rft_ialltoall(const void* send, size_t count, rft_datatype_t type, void* receive,
                  rft_comm_t comm, rft_request_t* request);
int rft_ialltoallv(const void* send, const size_t* send_counts, const size_t* send_displacements,
                   void* receive, const size_t* receive_counts, const size_t* receive_displacements,
                   rft_datatype_t type, rft_comm_t comm, rft_request_t* request);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RFT_H_ */
