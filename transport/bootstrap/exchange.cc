// Bootstrap::ExchangeLive and Exchange: every rank publishes a value and reads everyone's,
// without waiting for ranks that died or stay silent during start-up.
#include <pmix.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>

#include "base/clock.h"
#include "base/log.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/bootstrap/pmix_util.h"

namespace rft::transport {

using internal::TimeoutInfo;

namespace {

// The PMIx_Get_nb calls of one exchange. Callbacks may come after the exchange gave up on a
// rank (it died): the batch lives until the last of them and the exchange let go.
struct GetBatch {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<std::byte>> values;  // guarded by mutex
  std::vector<pmix_status_t> results;          // guarded by mutex; 1: not answered yet
  std::atomic<int> references{1};              // the exchange, plus one per call in flight

  void Unreference() {
    if (references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

// One lookup in flight. libpmix reads the process name, the key and the directives on its own
// thread after PMIx_Get_nb returned: they live here until the callback (ASan caught them on
// the caller's stack).
struct GetTicket {
  GetTicket(GetBatch* batch, Rank rank, const pmix_proc_t& proc, const std::string& key,
            std::chrono::nanoseconds timeout)
      : batch(batch), rank(rank), proc(proc), key(key), timeout(timeout) {}
  GetBatch* batch;
  Rank rank;
  pmix_proc_t proc;
  std::string key;
  TimeoutInfo timeout;
};

// Lookups whose callback has not run. libpmix may never answer one for a rank that died; they
// are freed once PMIx_Finalize stopped its thread (ReleaseAbandonedLookups).
std::mutex g_tickets_mutex;
std::set<GetTicket*> g_tickets;

constexpr pmix_status_t kUnanswered = 1;
constexpr int64_t kLookupGraceNs = 2'000'000'000;

void OnValue(pmix_status_t status, pmix_value_t* value, void* cbdata) {
  auto* ticket = static_cast<GetTicket*>(cbdata);
  {
    std::lock_guard<std::mutex> lock(g_tickets_mutex);
    g_tickets.erase(ticket);
  }
  GetBatch* batch = ticket->batch;
  {
    std::lock_guard<std::mutex> lock(batch->mutex);
    if (status == PMIX_SUCCESS && value != nullptr && value->type == PMIX_BYTE_OBJECT) {
      const auto* begin = reinterpret_cast<const std::byte*>(value->data.bo.bytes);
      batch->values[ticket->rank].assign(begin, begin + value->data.bo.size);
    } else if (status == PMIX_SUCCESS) {
      status = PMIX_ERR_BAD_PARAM;  // not the byte object rft publishes
    }
    batch->results[ticket->rank] = status;
  }
  batch->changed.notify_all();
  batch->Unreference();
  delete ticket;
}

}  // namespace

void internal::ReleaseAbandonedLookups() {
  std::set<GetTicket*> left;
  {
    std::lock_guard<std::mutex> lock(g_tickets_mutex);
    left.swap(g_tickets);
  }
  for (GetTicket* ticket : left) {
    ticket->batch->Unreference();
    delete ticket;
  }
}

StatusOr<Bootstrap::ExchangeResult> Bootstrap::ExchangeLive(std::string_view key,
                                                            std::span<const std::byte> mine) {
  const Deadline deadline = Deadline::After(timeout_);
  RFT_RETURN_IF_ERROR(Put(key, mine));
  RFT_RETURN_IF_ERROR(Commit());
  // Gathers everything in one collective when every rank takes part; when one died or hangs,
  // PMIx's answer is undefined (success, partial success, a timeout): the lookups decide.
  const Status fenced = Fence(/*collect_data=*/true);
  if (!fenced.ok())
    RFT_LOG_INFO("exchange of %s: %s", std::string(key).c_str(), fenced.ToString().c_str());

  // A fence that used up the time (a hung rank) leaves the others' values ready: they still
  // get a moment to arrive, or live ranks would be taken for silent ones.
  const Deadline lookups =
      Deadline::After(std::max(deadline.remaining(), std::chrono::nanoseconds(kLookupGraceNs)));
  const uint32_t size = this->size();
  auto* batch = new GetBatch();
  batch->values.resize(size);
  batch->results.assign(size, kUnanswered);
  batch->values[rank_].assign(mine.begin(), mine.end());
  batch->results[rank_] = PMIX_SUCCESS;
  const std::string k(key);
  for (Rank r = 0; r < size; ++r) {
    if (r == rank_) continue;
    batch->references.fetch_add(1, std::memory_order_relaxed);
    pmix_proc_t proc;
    ProcOf(r, &proc);
    auto* ticket = new GetTicket(batch, r, proc, k, lookups.remaining());
    {
      std::lock_guard<std::mutex> lock(g_tickets_mutex);
      g_tickets.insert(ticket);
    }
    const pmix_status_t rc =
        PMIx_Get_nb(&ticket->proc, ticket->key.c_str(), ticket->timeout.get(), 1, &OnValue, ticket);
    if (rc != PMIX_SUCCESS) {
      {
        std::lock_guard<std::mutex> lock(g_tickets_mutex);
        g_tickets.erase(ticket);
      }
      delete ticket;
      batch->references.fetch_sub(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(batch->mutex);
      batch->results[r] = rc;
    }
  }

  // Wait until every rank answered or is known dead, or the time is up.
  ExchangeResult result;
  {
    std::unique_lock<std::mutex> lock(batch->mutex);
    for (;;) {
      const RankSet dead = DeadRanks();
      bool waiting = false;
      for (Rank r = 0; r < size && !waiting; ++r) {
        waiting = batch->results[r] == kUnanswered && !dead.Contains(r);
      }
      if (!waiting || lookups.expired()) break;
      // Deaths arrive on libpmix's thread, not through this condition: wake now and then.
      batch->changed.wait_for(lock, std::chrono::milliseconds(5));
    }
    const RankSet dead = DeadRanks();
    result.values.resize(size);
    for (Rank r = 0; r < size; ++r) {
      if (r == rank_) {
        result.values[r] = batch->values[r];
        continue;
      }
      // A rank the launcher reported dead is missing even if its value arrived: some peers may
      // not have it, and it is failed for all of them.
      if (batch->results[r] == PMIX_SUCCESS && !dead.Contains(r)) {
        result.values[r] = std::move(batch->values[r]);
      } else {
        result.missing.Insert(r);
        if (!dead.Contains(r)) result.silent.Insert(r);
      }
    }
  }
  batch->Unreference();
  return result;
}

StatusOr<std::vector<std::vector<std::byte>>> Bootstrap::Exchange(std::string_view key,
                                                                  std::span<const std::byte> mine) {
  auto result = ExchangeLive(key, mine);
  if (!result.ok()) return result.status();
  if (result->missing.empty()) return std::move(result->values);
  const std::string k(key);
  if (!result->silent.empty()) {
    return Status(RFT_ERR_TIMEOUT, "exchange of " + k + ": rank(s) " + result->silent.ToString() +
                                       " did not publish within " +
                                       std::to_string(TimeoutInfo::Seconds(timeout_)) + " s");
  }
  return Status(RFT_ERR_PROC_FAILED, "exchange of " + k + ": rank(s) " +
                                         result->missing.ToString() +
                                         " ended before publishing (the launcher said so)");
}

}  // namespace rft::transport
