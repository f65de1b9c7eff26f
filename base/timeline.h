// rft::timeline: a process's failure events, written as they happen, for reading after the job
// (RFT_TIMELINE; docs/detector.md, "A failure timeline").
//
// With RFT_TIMELINE=DIR each process appends its events to DIR/rank-<job rank>-<pid>.jsonl, one
// JSON object a line:
//   {"ns":123456789,"rank":2,"event":"failed","subject":4,"detail":"heartbeat"}
// `ns` is CLOCK_MONOTONIC, which the processes of one node share, so the files of a job on one
// node merge into one causal order (tools/rft_timeline does it); across nodes each node's clock
// is its own. `subject` is a job rank for the failure events and a context id for the
// communicator ones (the detail names the communicator).
//
// Cost: unset, an event site is one relaxed atomic load and a predictable branch. Set, an event
// is one line formatted on the stack and one write(2) on a file opened with O_APPEND, so lines
// of different threads never interleave and nothing is allocated or locked. Events are rare
// (failures, revocations, agreements of the recovery path), never per message.
#ifndef RFT_BASE_TIMELINE_H_
#define RFT_BASE_TIMELINE_H_

#include <atomic>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace rft::timeline {

enum class Event : uint8_t {
  kStarted,       // the process joined the job (subject: the job size)
  kSuspected,     // this process saw no heartbeat from `subject` for the timeout
  kFailed,        // the registry recorded `subject` failed; detail: the source that told it
  kBroadcast,     // the reliable broadcast delivered news about `subject`; detail: its kind
  kKillAsked,     // this process asked the launcher to kill `subject` (a hung process)
  kDeclaredSelf,  // another process declared this one failed (subject: who); it ends now
  kAcknowledged,  // the program acknowledged failures on a communicator (subject: how many)
  kAgreed,        // an agreement on a communicator decided (detail: its failed set)
  kRevoked,       // the program revoked a communicator (subject: its context id)
  kRevokeHeard,   // a revocation of another member reached this process
  kShrunk,        // a shrink ended (subject: the new communicator's size)
  kSpawned,       // processes started by this job joined it (subject: how many)
  kFinalized,     // the process left the job cleanly
};
const char* EventName(Event event);

// Opens this process's file when RFT_TIMELINE names a directory (created if missing, one level),
// for job rank `self`, and records kStarted. Unset or empty: nothing, OK. A second call changes
// nothing. RFT_ERR_ARG naming the path when the directory or the file cannot be made.
Status Open(uint32_t self, uint32_t job_size);
// Records kFinalized and closes the file (events after it are dropped).
void Close();

namespace internal {
extern std::atomic<int> g_fd;
void Write(Event event, int64_t subject, std::string_view detail);
}  // namespace internal

inline bool Enabled() { return internal::g_fd.load(std::memory_order_relaxed) >= 0; }

// Records `event` now. `detail` is written as a JSON string (escaped; at most ~200 bytes kept).
inline void Record(Event event, int64_t subject, std::string_view detail = {}) {
  if (Enabled()) [[unlikely]]
    internal::Write(event, subject, detail);
}

}  // namespace rft::timeline

#endif  // RFT_BASE_TIMELINE_H_
