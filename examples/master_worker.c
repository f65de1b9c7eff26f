/* Example: a master hands out tasks and gives a dead worker's task to another (rft.h, C99).
 *
 *   rftrun -n 4 --ft master_worker [--tasks T] [--die-after K]
 *   rftrun -n 4 --ft --kill 2@3 master_worker --tasks 40000
 *
 * Rank 0 is the master; the others are workers that square numbers (slowly). The master waits
 * for results with one receive from ANY_SOURCE. When a worker fails, that receive returns
 * RFT_ERR_PROC_FAILED_PENDING and stays posted: the master asks which workers failed
 * (rft_comm_get_failed), acknowledges them (rft_comm_ack_failed), puts their tasks back in the
 * queue and waits again on the same request; a send of a task to a worker that died meanwhile
 * returns RFT_ERR_PROC_FAILED and that task goes back too. With --die-after K, worker 1 ends
 * itself (SIGKILL) on receiving its (K+1)-th task, a fault at a known point; --kill lets the
 * launcher kill at any time. With no worker left, the master does the rest itself. It checks
 * the sum of the results and exits 0 when it is right. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ulfm_api/rft.h"

enum { kTaskTag = 1, kResultTag = 2, kStop = -1, kMaxTasks = 100000 };

static void Die(const char* what, int rc) {
  fprintf(stderr, "master_worker: %s: %s (%s)\n", what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

static long Square(long task) {
  const struct timespec pause = {0, 200 * 1000}; /* 0.2 ms of "work" */
  nanosleep(&pause, NULL);
  return task * task;
}

/* ---- master ---- */

static int g_size;
static int* g_queue; /* tasks to hand out: a stack of returned ones over a counter */
static int g_queued, g_next, g_tasks;
static int* g_owner; /* [worker]: its task, or -1 when idle; -2: failed */
static int g_reassigned;
static char* g_finished; /* [task]: its result arrived (a failed worker's may arrive late) */

static int TakeTask(void) {
  while (g_queued > 0) {
    const int task = g_queue[--g_queued];
    if (!g_finished[task]) return task;
  }
  return g_next < g_tasks ? g_next++ : -1;
}

/* Gives `worker` a task if any is left; a worker that died is marked and its task requeued. */
static void Assign(int worker) {
  const int task = TakeTask();
  if (task < 0) return;
  const int rc = rft_send(&task, 1, RFT_INT, worker, kTaskTag, RFT_COMM_WORLD);
  if (rc == RFT_ERR_PROC_FAILED) {
    g_owner[worker] = -2;
    g_queue[g_queued++] = task;
    ++g_reassigned;
    return;
  }
  if (rc != RFT_SUCCESS) Die("send a task", rc);
  g_owner[worker] = task;
}

/* Acknowledges the failures known now; the failed workers' tasks go back to the queue. */
static void HandleFailures(void) {
  rft_group_t failed, world;
  int rc = rft_comm_get_failed(RFT_COMM_WORLD, &failed);
  if (rc != RFT_SUCCESS) Die("get_failed", rc);
  int count = 0, acked = 0;
  rft_group_size(failed, &count);
  rft_comm_ack_failed(RFT_COMM_WORLD, count, &acked);
  rft_comm_group(RFT_COMM_WORLD, &world);
  for (int i = 0; i < count; ++i) {
    int worker = -1;
    rft_group_translate_ranks(failed, 1, &i, world, &worker);
    if (worker <= 0 || g_owner[worker] == -2) continue;
    if (g_owner[worker] >= 0) {
      g_queue[g_queued++] = g_owner[worker];
      ++g_reassigned;
      printf("master: worker %d failed; its task %d goes back to the queue\n", worker,
             g_owner[worker]);
    }
    g_owner[worker] = -2;
  }
  rft_group_free(&failed);
  rft_group_free(&world);
}

static int Master(void) {
  long sum = 0;
  int done = 0;
  g_queue = calloc((size_t)g_tasks, sizeof(int));
  g_owner = calloc((size_t)g_size, sizeof(int));
  g_finished = calloc((size_t)g_tasks, 1);
  for (int w = 1; w < g_size; ++w) g_owner[w] = -1;
  for (int w = 1; w < g_size; ++w) Assign(w);
  long result[2];
  rft_request_t request = RFT_REQUEST_NULL;
  while (done < g_tasks) {
    int live = 0;
    for (int w = 1; w < g_size; ++w) live += g_owner[w] != -2;
    if (live == 0) { /* nobody left: the master works */
      for (int task; (task = TakeTask()) >= 0; ++done) sum += Square(task);
      break;
    }
    if (request == RFT_REQUEST_NULL) {
      int rc = rft_irecv(result, 2, RFT_LONG, RFT_ANY_SOURCE, kResultTag, RFT_COMM_WORLD, &request);
      if (rc != RFT_SUCCESS) Die("irecv", rc);
    }
    rft_status_t status;
    const int rc = rft_wait(&request, &status);
    if (rc == RFT_ERR_PROC_FAILED_PENDING) { /* the request stays posted */
      HandleFailures();
      for (int w = 1; w < g_size; ++w) {
        if (g_owner[w] == -1) Assign(w);
      }
      continue;
    }
    if (rc != RFT_SUCCESS) Die("wait for a result", rc);
    /* A result sent just before its worker failed still arrives: counted once. */
    if (!g_finished[result[0]]) {
      g_finished[result[0]] = 1;
      sum += result[1];
      ++done;
    }
    if (g_owner[status.source] != -2) {
      g_owner[status.source] = -1;
      Assign(status.source);
    }
  }
  if (request != RFT_REQUEST_NULL) { /* all done: the last receive is not needed */
    rft_cancel(&request);
    rft_wait(&request, RFT_STATUS_IGNORE);
  }
  const int stop = kStop;
  for (int w = 1; w < g_size; ++w) {
    if (g_owner[w] != -2) rft_send(&stop, 1, RFT_INT, w, kTaskTag, RFT_COMM_WORLD);
  }
  long expected = 0;
  for (long t = 0; t < g_tasks; ++t) expected += t * t;
  printf("master: %d tasks done, sum %ld (expected %ld), %d task(s) handed out again\n", done, sum,
         expected, g_reassigned);
  free(g_queue);
  free(g_owner);
  free(g_finished);
  return sum == expected ? 0 : 1;
}

/* ---- worker ---- */

static int Worker(int rank, int die_after) {
  for (int count = 0;; ++count) {
    int task = 0;
    const int rc = rft_recv(&task, 1, RFT_INT, 0, kTaskTag, RFT_COMM_WORLD, RFT_STATUS_IGNORE);
    if (rc == RFT_ERR_PROC_FAILED) {
      fprintf(stderr, "worker %d: the master failed; stopping\n", rank);
      return 1;
    }
    if (rc != RFT_SUCCESS) Die("receive a task", rc);
    if (task == kStop) return 0;
    if (rank == 1 && count == die_after) raise(SIGKILL); /* a fault at a known point */
    const long result[2] = {task, Square(task)};
    const int sent = rft_send(result, 2, RFT_LONG, 0, kResultTag, RFT_COMM_WORLD);
    if (sent != RFT_SUCCESS) Die("send a result", sent);
  }
}

int main(int argc, char** argv) {
  int die_after = -1;
  g_tasks = 40;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc) {
      g_tasks = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--die-after") == 0 && i + 1 < argc) {
      die_after = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: master_worker [--tasks T] [--die-after K]\n");
      return 2;
    }
  }
  if (g_tasks < 1 || g_tasks > kMaxTasks) {
    fprintf(stderr, "master_worker: --tasks %d: expected 1..%d\n", g_tasks, kMaxTasks);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  int provided, rank;
  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided);
  if (rc != RFT_SUCCESS) Die("init", rc);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  rft_comm_rank(RFT_COMM_WORLD, &rank);
  rft_comm_size(RFT_COMM_WORLD, &g_size);
  const int status = rank == 0 ? Master() : Worker(rank, die_after);
  rft_finalize();
  return status;
}
