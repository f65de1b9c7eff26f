// The API's requests and the handles that name them (rft_request_t).
//
// A handle is its slot's address with the slot's generation in the top 16 bits. Slots are never
// returned to the heap while the session lives, and a slot's generation advances each time its
// request is released, so a handle kept after its request completed (a copy of it, or a value
// read before a wait cleared it) is recognised and refused as an argument error instead of
// reaching a slot that is free or reused by another operation. A handle outlives 65,535 reuses
// of its slot before it could alias a live request again.
//
// Fast path: Acquire and Release are a pointer pop and push; Handle and Find a mask, a load and a
// compare. One thread (the session's) owns the table.
#ifndef RFT_ULFM_API_REQUEST_TABLE_H_
#define RFT_ULFM_API_REQUEST_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/check.h"
#include "ulfm_api/communicator.h"

namespace rft::api {

class RequestTable {
 public:
  explicit RequestTable(size_t chunk_size = 256) : chunk_size_(chunk_size) { Grow(); }
  ~RequestTable() {
    RFT_CHECK(in_use_ == 0, "request table destroyed with requests still in use (leaked)");
  }
  RequestTable(const RequestTable&) = delete;
  RequestTable& operator=(const RequestTable&) = delete;

  // A fresh request (every field at its initial value).
  [[gnu::always_inline]] Request* Acquire() {
    if (free_ == nullptr) [[unlikely]]
      Grow();
    Slot* slot = free_;
    free_ = slot->next_free;
    slot->request = Request();
    slot->live = true;
    ++in_use_;
    return &slot->request;
  }
  // Ends the request's life: its handles become stale.
  void Release(Request* request) {
    Slot* slot = SlotOf(request);
    RFT_DCHECK(slot->live, "released a request twice");
    slot->live = false;
    ++slot->generation;
    slot->next_free = free_;
    free_ = slot;
    --in_use_;
  }

  // The program gave the request up (rft_request_free): its handles become stale at once, while
  // the slot stays in use until Release.
  static void Orphan(Request* request) {
    Slot* slot = SlotOf(request);
    RFT_DCHECK(slot->live, "orphaned a released request");
    ++slot->generation;
  }

  // The handle of a live request (nullptr stays nullptr).
  static uintptr_t Handle(const Request* request) {
    if (request == nullptr) return 0;
    const Slot* slot = SlotOf(request);
    return reinterpret_cast<uintptr_t>(slot) | (uintptr_t{slot->generation} << kAddressBits);
  }
  // The live request a non-null handle names, or nullptr when the handle is stale. The handle
  // must have come from this table (any other value is undefined, as for any C pointer handle).
  static Request* Find(uintptr_t handle) {
    Slot* slot = reinterpret_cast<Slot*>(handle & kAddressMask);
    if (!slot->live || slot->generation != (handle >> kAddressBits)) [[unlikely]]
      return nullptr;
    return &slot->request;
  }

  size_t in_use() const { return in_use_; }
  // For a teardown that found requests the program never completed: forget them.
  void AbandonInUse() { in_use_ = 0; }

 private:
  // x86-64 and AArch64 user addresses fit in 48 bits (checked for every chunk).
  static constexpr unsigned kAddressBits = 48;
  static constexpr uintptr_t kAddressMask = (uintptr_t{1} << kAddressBits) - 1;

  struct Slot {
    Request request;  // first: a Request* is its Slot*
    Slot* next_free = nullptr;
    uint16_t generation = 0;
    bool live = false;
  };
  static Slot* SlotOf(const Request* request) {
    return reinterpret_cast<Slot*>(const_cast<Request*>(request));
  }

  void Grow() {
    chunks_.push_back(std::make_unique<Slot[]>(chunk_size_));
    Slot* chunk = chunks_.back().get();
    RFT_CHECK((reinterpret_cast<uintptr_t>(chunk + chunk_size_) & ~kAddressMask) == 0,
              "request slots above 2^48: the handle encoding needs 48-bit user addresses");
    for (size_t i = chunk_size_; i-- > 0;) {
      chunk[i].next_free = free_;
      free_ = &chunk[i];
    }
  }

  size_t chunk_size_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  Slot* free_ = nullptr;
  size_t in_use_ = 0;
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_REQUEST_TABLE_H_
