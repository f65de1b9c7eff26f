// One-sided access: memory a process registers so peers can put, get and atomically add into
// it without its involvement (heartbeat slots, revoke tables).
//
// LocalRegion memory is allocated by UCX (UCP_MEM_MAP_FLAG_ALLOCATE): on shared memory only
// UCX-allocated memory is truly one-sided; heap memory is emulated in software and needs the
// target to progress (NOTES.md). A peer uses the region through its descriptor (base address,
// size, packed rkey) turned into a RemoteRegion on its endpoint.
//
// Every remote access is checked against the region's size before anything is sent: a put
// past the end crashed the sender with SIGBUS in a measurement here, so it is an
// RFT_ERR_ARG naming offset, length and size instead.
#ifndef RFT_TRANSPORT_UCX_MEMORY_REGION_H_
#define RFT_TRANSPORT_UCX_MEMORY_REGION_H_

#include <ucp/api/ucp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "transport/ucx/ucx_worker.h"

namespace rft::transport::ucx {

class LocalRegion {
 public:
  static StatusOr<std::unique_ptr<LocalRegion>> Allocate(const UcxContext& context, size_t size);
  ~LocalRegion();
  LocalRegion(const LocalRegion&) = delete;
  LocalRegion& operator=(const LocalRegion&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  // What a peer needs to reach this region: publish it through the bootstrap.
  const std::vector<std::byte>& descriptor() const { return descriptor_; }

 private:
  LocalRegion(ucp_context_h context, ucp_mem_h memory) : context_(context), memory_(memory) {}
  ucp_context_h context_;
  ucp_mem_h memory_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::vector<std::byte> descriptor_;
};

// A peer's region, reached through `ep`. Operations complete before they return (bounded by
// `timeout`: RFT_ERR_TIMEOUT when the peer does not answer, RFT_ERR_PROC_FAILED when UCX
// reports it failed); puts are flushed so the data is at the peer when Put returns.
class RemoteRegion {
 public:
  // RFT_ERR_ARG for a malformed descriptor (wrong length, empty key).
  static StatusOr<std::unique_ptr<RemoteRegion>> Attach(UcxWorker* worker, ucp_ep_h ep,
                                                        std::span<const std::byte> descriptor);
  ~RemoteRegion();
  RemoteRegion(const RemoteRegion&) = delete;
  RemoteRegion& operator=(const RemoteRegion&) = delete;

  size_t size() const { return size_; }

  Status Put(uint64_t offset, std::span<const std::byte> data,
             std::chrono::nanoseconds timeout = std::chrono::seconds(5));
  // Puts the 64-bit `word` at `offset` (8-byte aligned) without waiting for it to reach the
  // peer: for heartbeats, where a late put is the protocol's to judge and a stopped peer must
  // not block the caller. At most one such put is in flight; while it is, a new one is skipped
  // and false returned (true when posted).
  StatusOr<bool> PostWord(uint64_t offset, uint64_t word);
  bool word_in_flight() const { return posted_ != nullptr && posted_->in_flight; }
  Status Get(uint64_t offset, std::span<std::byte> out,
             std::chrono::nanoseconds timeout = std::chrono::seconds(5));
  // Atomically adds `value` to the 64-bit word at `offset` (8-byte aligned) and returns the
  // word's previous value.
  StatusOr<uint64_t> FetchAdd(uint64_t offset, uint64_t value,
                              std::chrono::nanoseconds timeout = std::chrono::seconds(5));

 private:
  RemoteRegion(UcxWorker* worker, ucp_ep_h ep) : worker_(worker), ep_(ep) {}
  Status CheckBounds(const char* operation, uint64_t offset, uint64_t length) const;
  // Waits for `request` (a ucs_status_ptr_t) to complete, bounded by `timeout`.
  Status Complete(const char* operation, void* request, std::chrono::nanoseconds timeout);

  UcxWorker* worker_;
  ucp_ep_h ep_;
  ucp_rkey_h rkey_ = nullptr;
  // PostWord's source word and state. Heap-held so that a put still running when the region
  // goes can finish into it: the callback then frees it.
  struct PostedWord {
    uint64_t word = 0;
    bool in_flight = false;
    bool orphaned = false;
  };
  PostedWord* posted_ = nullptr;
  static void OnPostDone(void* request, ucs_status_t status, void* user_data);
  uint64_t base_ = 0;
  size_t size_ = 0;
};

}  // namespace rft::transport::ucx

#endif  // RFT_TRANSPORT_UCX_MEMORY_REGION_H_
