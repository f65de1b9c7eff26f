// rft_bench_coll: the API's collectives, communicator creation, revocation, and point-to-point
// through the API beside the data plane's in the same run.
//
//   rftrun -n N rft_bench_coll [--iters N] [--reps R] [--json]
//
// Each figure is the median over R repetitions of a per-repetition median (one clock read per
// iteration); for collectives the slowest rank's figure. Bench names (DESIGN §6):
//   p2p_latency   n = 2 (ranks 0 and 1): 8-byte ping-pong one-way time through rft_send/rft_recv
//                 ("api") and through the data plane directly ("plane"), alternating repetitions;
//                 "ratio" = api / plane
//   barrier, allreduce (8 B .. 1 MiB of doubles, SUM), bcast (8 B .. 1 MiB), dup_free (a dup and
//                 a free of COMM_WORLD)
//   agree         rft_comm_agree on COMM_WORLD, every member alive; "ratio" = agree / the 8-byte
//                 allreduce of the same run
//   iagree        rft_comm_iagree and rft_wait at once
//   iagree_x8     eight rft_comm_iagree outstanding, then one rft_waitall (time per window)
//   shrink        rft_comm_shrink of COMM_WORLD (nothing failed) and a free
//   ishrink       rft_comm_ishrink and rft_wait at once, and a free
//   agree_deadline  rft_comm_agree_deadline (10 s, every member in time)
//   shrink_after_failure   with --shrink-after-failure (rftrun --ft): the last rank is dead and
//                 known; rft_comm_shrink of COMM_WORLD (which excludes it) and a free
//   spawn_after_failure   with --spawn-after-failure (rftrun --ft): the last rank is dead and
//                 known; rft_comm_replace of a replacement for it, until every survivor holds the
//                 confirmed merged communicator (at most 20 rounds); "ratio" = spawn / a shrink of
//                 the same communicator, timed in the same rounds
//   spawn         with --spawn (rftrun --ft): rft_comm_spawn of one process from COMM_WORLD, until
//                 every parent holds the confirmed intercommunicator (at most 20 rounds); "ratio" =
//                 spawn / a shrink of COMM_WORLD, timed in the same rounds
//   revoke        rank 0 revokes a duplicate of COMM_WORLD while the others wait in a receive on
//                 it: time from the revoke until the last one returned (one node: one clock)
//   p2p_after_spawn   with --p2p-after-spawn (rftrun --ft): the last rank is dead and a
//                 replacement takes its place; 8-byte ping-pong one-way time between rank 0 and
//                 the replacement, and with n >= 3 beside rank 0 and rank 1 (a survivor) in
//                 alternating repetitions: "ratio" = replacement / survivor (docs/verbs.md,
//                 "Replacements")
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/clock.h"
#include "ulfm_api/binding.h"
#include "ulfm_api/rft.h"

namespace {

int g_rank = 0;
int g_size = 0;
bool g_json = false;

void Check(int rc, const char* what) {
  if (rc == RFT_SUCCESS) return;
  std::fprintf(stderr, "rft_bench_coll: %s: %s (%s)\n", what, rft_error_name(rc),
               rft_last_error_message());
  std::exit(1);
}

void CheckStatus(const rft::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "rft_bench_coll: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}
double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p / 100 * values.size()))];
}

// The slowest rank's value.
double Slowest(double mine) {
  double max = 0;
  Check(rft_allreduce(&mine, &max, 1, RFT_DOUBLE, RFT_MAX, RFT_COMM_WORLD), "allreduce");
  return max;
}

void Report(const char* bench, long size, long iters, double p50_us, double p99_us,
            const std::string& extra_json = "", const std::string& extra_text = "") {
  if (g_rank != 0) return;
  if (g_json) {
    std::printf("{\"bench\":\"%s\",\"n\":%d", bench, g_size);
    if (size >= 0) std::printf(",\"size\":%ld", size);
    std::printf(",\"iters\":%ld,\"p50_us\":%.3f,\"p99_us\":%.3f%s}\n", iters, p50_us, p99_us,
                extra_json.c_str());
  } else {
    std::printf("%-12s %3d %9s %8ld %10.3f %10.3f %s\n", bench, g_size,
                size >= 0 ? std::to_string(size).c_str() : "-", iters, p50_us, p99_us,
                extra_text.c_str());
  }
  std::fflush(stdout);
}

struct Figures {
  double p50_us;
  double p99_us;
};

// Runs `body` `iters` times per repetition after a barrier; the medians over the repetitions of
// the slowest rank's per-iteration median and 99th percentile, in µs.
template <class Body>
Figures Collect(long iters, int reps, Body body) {
  std::vector<double> medians, p99s;
  std::vector<double> samples(static_cast<size_t>(iters));
  for (int rep = 0; rep < reps; ++rep) {
    Check(rft_barrier(RFT_COMM_WORLD), "barrier");
    for (long i = 0; i < iters; ++i) {
      const int64_t start = rft::MonotonicNanos();
      body();
      samples[static_cast<size_t>(i)] = static_cast<double>(rft::MonotonicNanos() - start) / 1e3;
    }
    medians.push_back(Slowest(Median(samples)));
    p99s.push_back(Slowest(Percentile(samples, 99)));
  }
  return {Median(medians), Median(p99s)};
}

template <class Body>
Figures Measure(const char* bench, long size, long iters, int reps, Body body) {
  const Figures f = Collect(iters, reps, body);
  Report(bench, size, iters, f.p50_us, f.p99_us);
  return f;
}

// agree, iagree (started and waited for at once) and shrink with every member alive; agree's
// line carries its ratio to the 8-byte allreduce of the same run.
void Agreement(long iters, int reps, double allreduce_us) {
  int round = 0;
  const Figures agree = Collect(iters, reps, [&round] {
    int flag = ~(1 << (round++ % 31));
    Check(rft_comm_agree(RFT_COMM_WORLD, &flag), "agree");
  });
  char json[128], text[128];
  const double ratio = agree.p50_us / allreduce_us;
  std::snprintf(json, sizeof json, ",\"allreduce_p50_us\":%.3f,\"ratio\":%.3f", allreduce_us,
                ratio);
  std::snprintf(text, sizeof text, "(%.2fx allreduce 8 B)", ratio);
  Report("agree", -1, iters, agree.p50_us, agree.p99_us, json, text);
  Measure("iagree", -1, iters, reps, [] {
    int flag = 1;
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_comm_iagree(RFT_COMM_WORLD, &flag, &request), "iagree");
    Check(rft_wait(&request, RFT_STATUS_IGNORE), "wait");
  });
  // Eight outstanding at once, then one waitall: the time per window. Each agreement's schedule
  // may complete another's transfers; a progress loop that missed this slept until the next
  // event (50 ms at n = 4 on 2 cores) before 2026-12-05.
  Measure("iagree_x8", -1, std::max(10L, iters / 8), reps, [] {
    int flags[8];
    rft_request_t requests[8];
    for (int k = 0; k < 8; ++k) {
      flags[k] = ~(1 << k);
      Check(rft_comm_iagree(RFT_COMM_WORLD, &flags[k], &requests[k]), "iagree");
    }
    Check(rft_waitall(8, requests, RFT_STATUSES_IGNORE), "waitall");
  });
  Measure("shrink", -1, std::max(10L, iters / 10), reps, [] {
    rft_comm_t comm;
    Check(rft_comm_shrink(RFT_COMM_WORLD, &comm), "shrink");
    Check(rft_comm_free(&comm), "free");
  });
  Measure("ishrink", -1, std::max(10L, iters / 10), reps, [] {
    rft_comm_t comm = RFT_COMM_NULL;
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_comm_ishrink(RFT_COMM_WORLD, &comm, &request), "ishrink");
    Check(rft_wait(&request, RFT_STATUS_IGNORE), "wait");
    Check(rft_comm_free(&comm), "free");
  });
  // The check-in scheme's guarded agreement with every member in time (a deadline of 10 s that
  // never fires): the service's protocol and the guard's timer.
  Measure("agree_deadline", -1, iters, reps, [] {
    int flag = 1;
    Check(rft_comm_agree_deadline(RFT_COMM_WORLD, &flag, 10.0, nullptr), "agree_deadline");
  });
}

void PointToPoint(long iters, int reps) {
  if (g_size != 2) return;
  rft::transport::DataPlane& plane = rft::api::binding::session()->plane();
  const int peer = 1 - g_rank;
  char byte8[8] = {};
  std::vector<double> api, direct;
  std::vector<double> samples(static_cast<size_t>(iters));
  // Alternating repetitions: the same noise for both.
  for (int rep = 0; rep < 2 * reps; ++rep) {
    const bool through_api = rep % 2 == 0;
    Check(rft_barrier(RFT_COMM_WORLD), "barrier");
    for (long i = 0; i < iters; ++i) {
      const int64_t start = rft::MonotonicNanos();
      if (through_api) {
        if (g_rank == 0) {
          Check(rft_send(byte8, 8, RFT_BYTE, peer, 1, RFT_COMM_WORLD), "send");
          Check(rft_recv(byte8, 8, RFT_BYTE, peer, 1, RFT_COMM_WORLD, RFT_STATUS_IGNORE), "recv");
        } else {
          Check(rft_recv(byte8, 8, RFT_BYTE, peer, 1, RFT_COMM_WORLD, RFT_STATUS_IGNORE), "recv");
          Check(rft_send(byte8, 8, RFT_BYTE, peer, 1, RFT_COMM_WORLD), "send");
        }
      } else {
        // World's point-to-point context is 0; the same matching, without the API above it.
        if (g_rank == 0) {
          CheckStatus(plane.Send(byte8, 8, peer, 2, 0), "plane send");
          CheckStatus(plane.Recv(byte8, 8, peer, 2, 0, nullptr), "plane recv");
        } else {
          CheckStatus(plane.Recv(byte8, 8, peer, 2, 0, nullptr), "plane recv");
          CheckStatus(plane.Send(byte8, 8, peer, 2, 0), "plane send");
        }
      }
      samples[static_cast<size_t>(i)] = static_cast<double>(rft::MonotonicNanos() - start) / 2e3;
    }
    (through_api ? api : direct).push_back(Median(samples));
  }
  const double api_us = Median(api);
  const double plane_us = Median(direct);
  const double ratio = api_us / plane_us;
  char json[128], text[128];
  std::snprintf(json, sizeof json, ",\"plane_p50_us\":%.3f,\"ratio\":%.3f", plane_us, ratio);
  std::snprintf(text, sizeof text, "plane %.3f us, api/plane %.3f", plane_us, ratio);
  Report("p2p_latency", 8, iters, api_us, api_us, json, text);
}

void Revoke(int reps) {
  std::vector<double> reach;
  for (int rep = 0; rep < reps; ++rep) {
    rft_comm_t comm;
    Check(rft_comm_dup(RFT_COMM_WORLD, &comm), "dup");
    Check(rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN), "set_errhandler");
    Check(rft_barrier(RFT_COMM_WORLD), "barrier");
    int64_t returned = 0;
    int64_t start = 0;
    if (g_rank == 0) {
      // The others are (about to be) waiting; give them a moment to be inside the receive.
      const int64_t settle = rft::MonotonicNanos() + 2'000'000;
      while (rft::MonotonicNanos() < settle) {
      }
      start = rft::MonotonicNanos();
      Check(rft_comm_revoke(comm), "revoke");
      returned = start;
    } else {
      int value = 0;
      const int rc = rft_recv(&value, 1, RFT_INT, RFT_ANY_SOURCE, 0, comm, RFT_STATUS_IGNORE);
      returned = rft::MonotonicNanos();
      if (rc != RFT_ERR_REVOKED) Check(rc == RFT_SUCCESS ? RFT_ERR_OTHER : rc, "revoked receive");
    }
    int64_t last = 0;
    static_assert(sizeof(long) == sizeof(int64_t));
    long mine = static_cast<long>(returned), max = 0, origin = static_cast<long>(start);
    Check(rft_allreduce(&mine, &max, 1, RFT_LONG, RFT_MAX, RFT_COMM_WORLD), "allreduce");
    Check(rft_bcast(&origin, 1, RFT_LONG, 0, RFT_COMM_WORLD), "bcast");
    last = max;
    reach.push_back(static_cast<double>(last - origin) / 1e3);
    Check(rft_comm_free(&comm), "free");
  }
  Report("revoke", -1, reps, Median(reach), Percentile(reach, 99));
}

// The number of members of `comm` known failed.
int KnownFailed(rft_comm_t comm) {
  rft_group_t failed;
  int known = 0;
  Check(rft_comm_get_failed(comm, &failed), "get_failed");
  Check(rft_group_size(failed, &known), "group_size");
  Check(rft_group_free(&failed), "group_free");
  return known;
}

// The start of the after-failure benchmarks: the last rank dies once every rank is past a
// barrier, and the others return once they know it. Returns the survivors, shrunk from COMM_WORLD.
rft_comm_t LoseLastRank() {
  Check(rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN), "errhandler");
  const int rc = rft_barrier(RFT_COMM_WORLD);
  if (rc != RFT_SUCCESS && rc != RFT_ERR_PROC_FAILED) Check(rc, "barrier");
  if (g_rank == g_size - 1) raise(SIGKILL);
  while (KnownFailed(RFT_COMM_WORLD) == 0) usleep(100);
  rft_comm_t survivors;
  Check(rft_comm_shrink(RFT_COMM_WORLD, &survivors), "shrink");
  return survivors;
}

}  // namespace

// --shrink-after-failure (rftrun --ft): the last rank dies once every rank is past a barrier;
// the others wait until they know it, then shrink COMM_WORLD `iters` times (each an agreement
// that has to exclude the dead member, on the agreement service) and free the result; the
// slowest survivor's median.
void ShrinkAfterFailure(long iters) {
  rft_comm_t survivors = LoseLastRank();
  std::vector<double> samples;
  for (long i = 0; i < iters; ++i) {
    Check(rft_barrier(survivors), "barrier");
    const int64_t start = rft::MonotonicNanos();
    rft_comm_t shrunk;
    Check(rft_comm_shrink(RFT_COMM_WORLD, &shrunk), "shrink");
    samples.push_back(static_cast<double>(rft::MonotonicNanos() - start) / 1e3);
    Check(rft_comm_free(&shrunk), "free");
  }
  double p50 = Median(samples), p99 = Percentile(samples, 99), slowest[2];
  const double mine[2] = {p50, p99};
  Check(rft_allreduce(mine, slowest, 2, RFT_DOUBLE, RFT_MAX, survivors), "allreduce");
  Report("shrink_after_failure", -1, iters, slowest[0], slowest[1]);
  Check(rft_comm_free(&survivors), "free");
}

// The time of a shrink of `comm` (and a free), in µs: the spawn benchmarks' reference.
double TimedShrinkUs(rft_comm_t comm) {
  const int64_t start = rft::MonotonicNanos();
  rft_comm_t shrunk;
  Check(rft_comm_shrink(comm, &shrunk), "shrink");
  const double us = static_cast<double>(rft::MonotonicNanos() - start) / 1e3;
  Check(rft_comm_free(&shrunk), "free");
  return us;
}

// A spawn benchmark's line: the slowest member of `over`'s spawn median and p99, and its shrink
// median beside them ("ratio" = spawn / shrink).
void ReportAgainstShrink(const char* bench, long rounds, const std::vector<double>& spawns,
                         const std::vector<double>& shrinks, rft_comm_t over) {
  const double mine[3] = {Median(spawns), Percentile(spawns, 99), Median(shrinks)};
  double slowest[3];
  Check(rft_allreduce(mine, slowest, 3, RFT_DOUBLE, RFT_MAX, over), "allreduce");
  char json[64], text[64];
  std::snprintf(json, sizeof json, ",\"shrink_us\":%.3f,\"ratio\":%.2f", slowest[2],
                slowest[0] / slowest[2]);
  std::snprintf(text, sizeof text, "shrink %.3f us, spawn/shrink %.1f", slowest[2],
                slowest[0] / slowest[2]);
  Report(bench, -1, rounds, slowest[0], slowest[1], json, text);
}

// --spawn-after-failure (rftrun --ft): the last rank dies as for --shrink-after-failure. Then,
// each round, the survivors shrink the current communicator (timed: the reference of the same
// round) and spawn a replacement for its dead member (timed until rft_comm_replace returns with the
// merged communicator confirmed). The replacement (this program with --replacement) takes a
// barrier with them and ends itself, so the next round starts from a failure again. A spawn
// starts a process: rounds cost tens of milliseconds, hence at most 20 of them.
void SpawnAfterFailure(long iters, char* program) {
  rft_comm_t survivors = LoseLastRank();
  char replacement_flag[] = "--replacement";
  char* args[] = {program, replacement_flag, nullptr};
  const long rounds = std::min(iters, 20L);
  std::vector<double> spawns, shrinks;
  rft_comm_t current = RFT_COMM_WORLD;
  for (long i = 0; i < rounds; ++i) {
    Check(rft_barrier(survivors), "barrier");
    shrinks.push_back(TimedShrinkUs(current));
    Check(rft_barrier(survivors), "barrier");
    const int64_t start = rft::MonotonicNanos();
    rft_comm_t merged;
    Check(rft_comm_replace(current, args, &merged), "spawn");
    spawns.push_back(static_cast<double>(rft::MonotonicNanos() - start) / 1e3);
    if (current != RFT_COMM_WORLD) Check(rft_comm_free(&current), "free");
    current = merged;
    Check(rft_comm_set_errhandler(current, RFT_ERRORS_RETURN), "errhandler");
    Check(rft_barrier(current), "barrier with the replacement");
    while (KnownFailed(current) == 0) usleep(100);  // it ends itself after the barrier
  }
  ReportAgainstShrink("spawn_after_failure", rounds, spawns, shrinks, survivors);
  if (current != RFT_COMM_WORLD) Check(rft_comm_free(&current), "free");
  Check(rft_comm_free(&survivors), "free");
}

// --spawn (rftrun --ft): each round, every rank shrinks COMM_WORLD (timed: the reference of the
// same round, nothing failed) and spawns one process from it (rft_comm_spawn, root 0; timed until
// it returns with the intercommunicator confirmed). The child (this program with --spawned)
// takes a barrier with its parents and ends itself; every parent waits until it knows, so the
// next round's spawn finds no live process outside COMM_WORLD. At most 20 rounds.
void Spawn(long iters, char* program) {
  char spawned_flag[] = "--spawned";
  char* args[] = {spawned_flag, nullptr};
  const long rounds = std::min(iters, 20L);
  std::vector<double> spawns, shrinks;
  for (long i = 0; i < rounds; ++i) {
    Check(rft_barrier(RFT_COMM_WORLD), "barrier");
    shrinks.push_back(TimedShrinkUs(RFT_COMM_WORLD));
    Check(rft_barrier(RFT_COMM_WORLD), "barrier");
    const int64_t start = rft::MonotonicNanos();
    rft_comm_t children;
    Check(rft_comm_spawn(RFT_COMM_WORLD, program, args, 1, 0, &children, RFT_ERRCODES_IGNORE),
          "spawn");
    spawns.push_back(static_cast<double>(rft::MonotonicNanos() - start) / 1e3);
    Check(rft_comm_set_errhandler(children, RFT_ERRORS_RETURN), "errhandler");
    Check(rft_barrier(children), "barrier with the child");
    while (KnownFailed(children) == 0) usleep(100);  // it ends itself after the barrier
    Check(rft_comm_free(&children), "free");
  }
  ReportAgainstShrink("spawn", rounds, spawns, shrinks, RFT_COMM_WORLD);
}

// A child of --spawn: meets its parents once and ends itself.
[[noreturn]] void BeSpawned() {
  rft_comm_t parent;
  Check(rft_comm_get_parent(&parent), "get_parent");
  Check(rft_barrier(parent), "barrier with the parents");
  raise(SIGKILL);
  for (;;) pause();
}

// 8-byte ping-pongs over `comm` (a merged communicator): rank 0 with rank 1 and with the last
// rank, the replacement, in alternating repetitions (with the replacement alone when n = 2);
// the partners answer. At rank 0, the median
// one-way time of each partner's repetitions, in µs.
struct PartnerTimes {
  double survivor_us = 0;
  double replacement_us = 0;
};
PartnerTimes PingPongWithReplacement(rft_comm_t comm, long iters, int reps) {
  int rank = 0, size = 0;
  Check(rft_comm_rank(comm, &rank), "rank");
  Check(rft_comm_size(comm, &size), "size");
  char byte8[8] = {};
  std::vector<double> survivor, replacement;
  std::vector<double> samples(static_cast<size_t>(iters));
  // With n = 2 the replacement is rank 0's only partner.
  const bool with_survivor = size >= 3;
  for (int rep = 0; rep < (with_survivor ? 2 : 1) * reps; ++rep) {
    const int partner = with_survivor && rep % 2 == 0 ? 1 : size - 1;
    Check(rft_barrier(comm), "barrier");
    for (long i = 0; i < iters; ++i) {
      const int64_t start = rft::MonotonicNanos();
      if (rank == 0) {
        Check(rft_send(byte8, 8, RFT_BYTE, partner, 3, comm), "send");
        Check(rft_recv(byte8, 8, RFT_BYTE, partner, 3, comm, RFT_STATUS_IGNORE), "recv");
      } else if (rank == partner) {
        Check(rft_recv(byte8, 8, RFT_BYTE, 0, 3, comm, RFT_STATUS_IGNORE), "recv");
        Check(rft_send(byte8, 8, RFT_BYTE, 0, 3, comm), "send");
      }
      samples[static_cast<size_t>(i)] = static_cast<double>(rft::MonotonicNanos() - start) / 2e3;
    }
    (partner == size - 1 ? replacement : survivor).push_back(Median(samples));
  }
  Check(rft_barrier(comm), "barrier");
  return {survivor.empty() ? 0 : Median(survivor), Median(replacement)};
}

// --p2p-after-spawn (rftrun --ft, n >= 2): the last rank dies as for --shrink-after-failure, and
// the survivors spawn a replacement for it (this program with --replacement-p2p and the same
// counts); then PingPongWithReplacement.
void P2pAfterSpawn(long iters, int reps, char* program) {
  if (g_size < 2) {
    std::fprintf(stderr, "rft_bench_coll: --p2p-after-spawn needs at least 2 ranks\n");
    std::exit(2);
  }
  rft_comm_t survivors = LoseLastRank();
  std::string iters_text = std::to_string(iters), reps_text = std::to_string(reps);
  char flag[] = "--replacement-p2p", iters_flag[] = "--iters", reps_flag[] = "--reps";
  char* args[] = {program,          flag,   iters_flag, iters_text.data(), reps_flag,
                  reps_text.data(), nullptr};
  rft_comm_t merged;
  Check(rft_comm_replace(RFT_COMM_WORLD, args, &merged), "spawn");
  const PartnerTimes times = PingPongWithReplacement(merged, iters, reps);
  char json[128] = "", text[128] = "no survivor partner (n = 2)";
  if (times.survivor_us > 0) {
    const double ratio = times.replacement_us / times.survivor_us;
    std::snprintf(json, sizeof json, ",\"survivor_p50_us\":%.3f,\"ratio\":%.3f", times.survivor_us,
                  ratio);
    std::snprintf(text, sizeof text, "survivor %.3f us, replacement/survivor %.3f",
                  times.survivor_us, ratio);
  }
  Report("p2p_after_spawn", 8, iters, times.replacement_us, times.replacement_us, json, text);
  Check(rft_comm_free(&merged), "free");
  Check(rft_comm_free(&survivors), "free");
}

// A replacement of --p2p-after-spawn: answers rank 0's ping-pongs over the merged communicator.
void BeP2pReplacement(long iters, int reps) {
  rft_comm_t parent;
  Check(rft_comm_get_parent(&parent), "get_parent");
  (void)PingPongWithReplacement(parent, iters, reps);
}

// A replacement of --spawn-after-failure: joined (rft_init confirmed the merge), it meets the
// survivors once and ends itself, the next round's failure.
[[noreturn]] void BeReplacement() {
  rft_comm_t parent;
  Check(rft_comm_get_parent(&parent), "get_parent");
  Check(rft_barrier(parent), "barrier with the survivors");
  raise(SIGKILL);
  for (;;) pause();
}

int main(int argc, char** argv) {
  long iters = 2000;
  int reps = 5;
  bool shrink_after_failure = false, spawn_after_failure = false, replacement = false;
  bool p2p_after_spawn = false, p2p_replacement = false, spawn = false, spawned = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      g_json = true;
    } else if (std::strcmp(argv[i], "--shrink-after-failure") == 0) {
      shrink_after_failure = true;
    } else if (std::strcmp(argv[i], "--spawn-after-failure") == 0) {
      spawn_after_failure = true;
    } else if (std::strcmp(argv[i], "--spawn") == 0) {
      spawn = true;
    } else if (std::strcmp(argv[i], "--spawned") == 0) {
      spawned = true;
    } else if (std::strcmp(argv[i], "--replacement") == 0) {
      replacement = true;
    } else if (std::strcmp(argv[i], "--p2p-after-spawn") == 0) {
      p2p_after_spawn = true;
    } else if (std::strcmp(argv[i], "--replacement-p2p") == 0) {
      p2p_replacement = true;
    } else if (std::strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: rft_bench_coll [--iters N] [--reps R] [--json] "
          "[--shrink-after-failure | --spawn-after-failure | --spawn | --p2p-after-spawn]\n");
      return 2;
    }
  }
  if (iters <= 0 || reps <= 0) {
    std::fprintf(stderr, "rft_bench_coll: --iters and --reps must be positive\n");
    return 2;
  }
  Check(rft_init(&argc, &argv, RFT_FT_NOTIFY, nullptr), "init");
  Check(rft_comm_rank(RFT_COMM_WORLD, &g_rank), "rank");
  Check(rft_comm_size(RFT_COMM_WORLD, &g_size), "size");
  if (replacement) BeReplacement();
  if (spawned) BeSpawned();
  if (spawn) {
    Spawn(iters, argv[0]);
    Check(rft_finalize(), "finalize");
    return 0;
  }
  if (p2p_replacement || p2p_after_spawn) {
    if (p2p_replacement) {
      BeP2pReplacement(iters, reps);
    } else {
      P2pAfterSpawn(iters, reps, argv[0]);
    }
    Check(rft_finalize(), "finalize");
    return 0;
  }
  if (spawn_after_failure) {
    SpawnAfterFailure(iters, argv[0]);
    Check(rft_finalize(), "finalize");
    return 0;
  }
  if (shrink_after_failure) {
    ShrinkAfterFailure(iters);
    Check(rft_finalize(), "finalize");
    return 0;
  }
  if (g_rank == 0 && !g_json) {
    std::printf("# rft_bench_coll: median of %d repetitions of %ld iterations; slowest rank\n",
                reps, iters);
    std::printf("%-12s %3s %9s %8s %10s %10s\n", "bench", "n", "size", "iters", "p50_us", "p99_us");
  }
  PointToPoint(iters * 10, reps);
  Measure("barrier", -1, iters, reps, [] { Check(rft_barrier(RFT_COMM_WORLD), "barrier"); });
  std::vector<double> send(1 << 17), receive(1 << 17);
  double allreduce_8_us = 0;
  for (size_t bytes = 8; bytes <= (1u << 20); bytes *= 16) {
    const long n = bytes >= 65536 ? std::max(10L, iters / 20) : iters;
    const Figures f = Measure("allreduce", static_cast<long>(bytes), n, reps, [&] {
      Check(rft_allreduce(send.data(), receive.data(), bytes / 8, RFT_DOUBLE, RFT_SUM,
                          RFT_COMM_WORLD),
            "allreduce");
    });
    if (bytes == 8) allreduce_8_us = f.p50_us;
  }
  for (size_t bytes = 8; bytes <= (1u << 20); bytes *= 16) {
    const long n = bytes >= 65536 ? std::max(10L, iters / 20) : iters;
    Measure("bcast", static_cast<long>(bytes), n, reps,
            [&] { Check(rft_bcast(send.data(), bytes, RFT_BYTE, 0, RFT_COMM_WORLD), "bcast"); });
  }
  Measure("dup_free", -1, std::max(10L, iters / 10), reps, [] {
    rft_comm_t comm;
    Check(rft_comm_dup(RFT_COMM_WORLD, &comm), "dup");
    Check(rft_comm_free(&comm), "free");
  });
  Agreement(iters, reps, allreduce_8_us);
  Revoke(std::max(reps, 11));
  Check(rft_finalize(), "finalize");
  return 0;
}
