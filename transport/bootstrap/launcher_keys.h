// What an rft job and its launcher agree on beyond standard PMIx: the keys rftrun adds to a
// job's information and the names of the files a job leaves on a node. Header-only, no
// dependencies, so the launcher (tools/rftrun) and the library share one definition.
#ifndef RFT_TRANSPORT_BOOTSTRAP_LAUNCHER_KEYS_H_
#define RFT_TRANSPORT_BOOTSTRAP_LAUNCHER_KEYS_H_

#include <cstdint>
#include <string_view>

namespace rft::transport {

// Job-level PMIx key (PMIX_UINT32): a random secret the launcher draws for each job, carried by
// every wire message (Bootstrap::job_token). Absent under other launchers.
inline constexpr char kJobTokenKey[] = "rft.job.token";

// A public digest of a namespace (FNV-1a): names the job's files, e.g. "/dev/shm/rft-<8 hex>-*",
// so the launcher can remove what a crashed job left. Not a secret.
constexpr uint32_t NspaceTag(std::string_view nspace) {
  uint32_t hash = 2166136261u;
  for (char c : nspace) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619u;
  }
  return hash;
}

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_BOOTSTRAP_LAUNCHER_KEYS_H_
