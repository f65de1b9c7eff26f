// rft::fault: named points in the recovery paths where a test makes one process die, so that a
// failure lands exactly between two steps of a protocol. A timer or the launcher's kill cannot
// place it there; tests of the "spawner dies before it publishes" kind need exactly that.
//
// RFT_FAULT_INJECT="<point>@<job rank>[,<point>@<job rank>...]" arms them (docs/configuration.md);
// unset, every point is a load and a branch on a path that runs once per recovery, never on a
// message's path. The points (each documented where it fires):
//   spawn.launched    the spawning survivor, after the launcher started the replacements and
//                     before it publishes the merge record and their namespace.
//   merge.confirming  any member of a merged communicator (survivor or replacement), after it
//                     started its part of the confirming agreement.
//   verbs.close.requested  a process asked to close a verbs pair's QPs (docs/verbs.md, "Giving
//                     a place back"), as the request arrives and before it answers.
//   verbs.close.closing    the process that asked, as the agreement arrives and before it
//                     closes its QP (the other end waits for kVerbsClosed, its QP quiet).
//   verbs.return.taken     a process whose peer brings their pair back from UCX to verbs
//                     (docs/verbs.md, "Coming back"), as the peer's link message arrives.
//   revoke.one_notice  a process revoking a communicator, after its data-plane notice reached
//                     only the member of lowest rank but itself and before its own flood
//                     started: what the other members learn, they learn from that member's
//                     relay (ulfm_api/revoke_service.h).
// Two points make a step fail instead, and the process goes on (their failure paths have no
// other trigger short of a broken device or launcher):
//   verbs.offer.fails  a process offered a control-plane QP on demand (docs/verbs.md, "Control
//                     messages by SEND") fails to connect it, as a device error would, and
//                     declines.
//   abort.refused     a process aborting (rft_abort, a fatal error handler) is refused by the
//                     launcher, as by one without abort support, and takes its last resort.
#ifndef RFT_BASE_FAULT_INJECTION_H_
#define RFT_BASE_FAULT_INJECTION_H_

#include <string_view>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::fault {

// Arms the points `text` names (the variable's syntax above), replacing what was armed;
// RFT_ERR_ARG naming the bad entry and what was expected (an unknown point, a rank that is not
// a number). Empty disarms all.
Status Arm(std::string_view text);
// Arms from RFT_FAULT_INJECT (unset: nothing).
Status ArmFromConfig();

// Whether `point` is armed for job rank `rank`.
bool Armed(std::string_view point, Rank rank);
// Says which point fired on stderr and ends this process with SIGKILL, as a crash would.
[[noreturn]] void Die(std::string_view point);
// The error a failing point (verbs.offer.fails) makes its step return: RFT_ERR_OTHER naming
// the point.
Status Failure(std::string_view point);

}  // namespace rft::fault

#endif  // RFT_BASE_FAULT_INJECTION_H_
