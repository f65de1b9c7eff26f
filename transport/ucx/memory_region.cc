#include "transport/ucx/memory_region.h"

#include <cstring>
#include <string>

#include "base/clock.h"

namespace rft::transport::ucx {
namespace {

// Descriptor: base address (u64), size (u64), key length (u32), then the packed key; all
// little-endian.
constexpr size_t kDescriptorFixed = 8 + 8 + 4;

void PutLe(std::vector<std::byte>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}

uint64_t GetLe(std::span<const std::byte> in, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(in[at + i]) << (8 * i);
  return value;
}

}  // namespace

StatusOr<std::unique_ptr<LocalRegion>> LocalRegion::Allocate(const UcxContext& context,
                                                             size_t size) {
  if (size == 0) return ArgError("memory region of 0 bytes: expected at least 1 byte");
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                      UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  params.address = nullptr;
  params.length = size;
  params.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memory = nullptr;
  ucs_status_t status = ucp_mem_map(context.get(), &params, &memory);
  if (status != UCS_OK)
    return UcxError("ucp_mem_map of " + std::to_string(size) + " bytes", status);
  std::unique_ptr<LocalRegion> region(new LocalRegion(context.get(), memory));
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  status = ucp_mem_query(memory, &attr);
  if (status != UCS_OK) return UcxError("ucp_mem_query", status);
  region->data_ = static_cast<std::byte*>(attr.address);
  region->size_ = size;  // UCX may round the mapping up; peers get what was asked for
  std::memset(region->data_, 0, size);

  void* key = nullptr;
  size_t key_size = 0;
  status = ucp_rkey_pack(context.get(), memory, &key, &key_size);
  if (status != UCS_OK) return UcxError("ucp_rkey_pack", status);
  PutLe(region->descriptor_, reinterpret_cast<uint64_t>(region->data_), 8);
  PutLe(region->descriptor_, size, 8);
  PutLe(region->descriptor_, key_size, 4);
  const auto* key_bytes = static_cast<const std::byte*>(key);
  region->descriptor_.insert(region->descriptor_.end(), key_bytes, key_bytes + key_size);
  ucp_rkey_buffer_release(key);
  return region;
}

LocalRegion::~LocalRegion() { ucp_mem_unmap(context_, memory_); }

StatusOr<std::unique_ptr<RemoteRegion>> RemoteRegion::Attach(
    UcxWorker* worker, ucp_ep_h ep, std::span<const std::byte> descriptor) {
  if (descriptor.size() < kDescriptorFixed) {
    return ArgError("memory region descriptor of " + std::to_string(descriptor.size()) +
                    " bytes: expected at least " + std::to_string(kDescriptorFixed));
  }
  const uint64_t key_size = GetLe(descriptor, 16, 4);
  if (key_size == 0 || descriptor.size() != kDescriptorFixed + key_size) {
    return ArgError("memory region descriptor: key of " + std::to_string(key_size) +
                    " bytes in a descriptor of " + std::to_string(descriptor.size()));
  }
  std::unique_ptr<RemoteRegion> region(new RemoteRegion(worker, ep));
  region->base_ = GetLe(descriptor, 0, 8);
  region->size_ = GetLe(descriptor, 8, 8);
  const ucs_status_t status =
      ucp_ep_rkey_unpack(ep, descriptor.data() + kDescriptorFixed, &region->rkey_);
  if (status != UCS_OK) return UcxError("ucp_ep_rkey_unpack", status);
  return region;
}

RemoteRegion::~RemoteRegion() {
  if (posted_ != nullptr) {
    if (posted_->in_flight) {
      posted_->orphaned = true;  // UCX's callback frees it
    } else {
      delete posted_;
    }
  }
  if (rkey_ != nullptr) ucp_rkey_destroy(rkey_);
}

void RemoteRegion::OnPostDone(void* request, ucs_status_t, void* user_data) {
  auto* posted = static_cast<PostedWord*>(user_data);
  ucp_request_free(request);
  posted->in_flight = false;
  if (posted->orphaned) delete posted;
}

StatusOr<bool> RemoteRegion::PostWord(uint64_t offset, uint64_t word) {
  Status status = CheckBounds("put", offset, sizeof(word));
  if (!status.ok()) return status;
  if (offset % sizeof(word) != 0) {
    return ArgError("put of a word at offset " + std::to_string(offset) +
                    ": expected an 8-byte aligned offset");
  }
  if (posted_ == nullptr) posted_ = new PostedWord();  // once per region
  if (posted_->in_flight) return false;
  posted_->word = word;
  ucp_request_param_t param;
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = &OnPostDone;
  param.user_data = posted_;
  void* request =
      ucp_put_nbx(ep_, &posted_->word, sizeof(posted_->word), base_ + offset, rkey_, &param);
  if (UCS_PTR_IS_ERR(request)) return UcxError("ucp_put_nbx", UCS_PTR_STATUS(request));
  posted_->in_flight = request != nullptr;  // nullptr: done at once
  return true;
}

Status RemoteRegion::CheckBounds(const char* operation, uint64_t offset, uint64_t length) const {
  if (offset > size_ || length > size_ - offset) {
    return ArgError(std::string(operation) + " of " + std::to_string(length) + " bytes at offset " +
                    std::to_string(offset) + ": outside the remote region of " +
                    std::to_string(size_) + " bytes");
  }
  return Status::Ok();
}

namespace {
constexpr std::chrono::milliseconds kCancelWait(100);
}  // namespace

Status RemoteRegion::Complete(const char* operation, void* request,
                              std::chrono::nanoseconds timeout) {
  if (request == nullptr) return Status::Ok();
  if (UCS_PTR_IS_ERR(request)) return UcxError(operation, UCS_PTR_STATUS(request));
  const Deadline deadline = Deadline::After(timeout);
  ucs_status_t status;
  while ((status = ucp_request_check_status(request)) == UCS_INPROGRESS) {
    if (deadline.expired()) {
      // UCX may not cancel a non-tag operation (an RMA to a stopped peer over TCP never ended
      // here): wait a little for the cancellation, then hand the request back to UCX, which
      // frees it whenever the operation ends (the endpoint's close ends it at the latest).
      ucp_request_cancel(worker_->get(), request);
      const Deadline cancelled = Deadline::After(kCancelWait);
      while (ucp_request_check_status(request) == UCS_INPROGRESS && !cancelled.expired()) {
        worker_->Progress();
      }
      ucp_request_free(request);
      return Status(RFT_ERR_TIMEOUT, std::string(operation) + ": no completion within " +
                                         std::to_string(timeout.count() / 1000000) + " ms");
    }
    worker_->Progress();
  }
  ucp_request_free(request);
  if (status == UCS_OK) return Status::Ok();
  if (status == UCS_ERR_CONNECTION_RESET || status == UCS_ERR_ENDPOINT_TIMEOUT ||
      status == UCS_ERR_UNREACHABLE) {
    return Status(RFT_ERR_PROC_FAILED,
                  std::string(operation) + ": the peer failed (" + ucs_status_string(status) + ")");
  }
  return UcxError(operation, status);
}

Status RemoteRegion::Put(uint64_t offset, std::span<const std::byte> data,
                         std::chrono::nanoseconds timeout) {
  Status status = CheckBounds("put", offset, data.size());
  if (!status.ok()) return status;
  ucp_request_param_t param{};
  status =
      Complete("ucp_put_nbx",
               ucp_put_nbx(ep_, data.data(), data.size(), base_ + offset, rkey_, &param), timeout);
  if (!status.ok()) return status;
  // Local completion only frees the source buffer; the flush makes the data remote.
  return Complete("ucp_ep_flush_nbx", ucp_ep_flush_nbx(ep_, &param), timeout);
}

Status RemoteRegion::Get(uint64_t offset, std::span<std::byte> out,
                         std::chrono::nanoseconds timeout) {
  Status status = CheckBounds("get", offset, out.size());
  if (!status.ok()) return status;
  ucp_request_param_t param{};
  return Complete("ucp_get_nbx",
                  ucp_get_nbx(ep_, out.data(), out.size(), base_ + offset, rkey_, &param), timeout);
}

StatusOr<uint64_t> RemoteRegion::FetchAdd(uint64_t offset, uint64_t value,
                                          std::chrono::nanoseconds timeout) {
  Status status = CheckBounds("fetch-add", offset, sizeof(uint64_t));
  if (!status.ok()) return status;
  if ((base_ + offset) % sizeof(uint64_t) != 0) {
    return ArgError("fetch-add at offset " + std::to_string(offset) +
                    ": expected an 8-byte aligned word");
  }
  uint64_t previous = 0;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
  param.datatype = ucp_dt_make_contig(sizeof(uint64_t));
  param.reply_buffer = &previous;
  status = Complete(
      "ucp_atomic_op_nbx",
      ucp_atomic_op_nbx(ep_, UCP_ATOMIC_OP_ADD, &value, 1, base_ + offset, rkey_, &param), timeout);
  if (!status.ok()) return status;
  return previous;
}

}  // namespace rft::transport::ucx
