// The data plane's rules, checked on real UCX endpoints: each rank sends to its successor
// and receives from its predecessor in a ring (with one process, to itself). Fences order
// the two sides where a check needs messages to arrive before or after receives are posted.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "base/clock.h"
#include "tests/multiproc/dataplane_checks.h"
#include "tests/multiproc/dataplane_test_access.h"

namespace rft::testing {
namespace {

using transport::DataPlane;
using transport::DecodeError;
using transport::kAnySource;
using transport::kAnyTag;
using transport::MessageStatus;
using transport::Request;
using transport::WireHeader;

constexpr uint32_t kContext = 1;

Deadline Soon() { return Deadline::After(std::chrono::seconds(20)); }

// Waits until a message (source, tag) has arrived (so later checks see it as unexpected).
Status AwaitArrival(DataPlane& plane, Rank source, int32_t tag) {
  const Deadline deadline = Soon();
  for (bool found = false; !found;) {
    RFT_RETURN_IF_ERROR(plane.Iprobe(source, tag, kContext, &found, nullptr));
    if (deadline.expired()) return TimeoutError("no message with tag " + std::to_string(tag));
  }
  return Status::Ok();
}

struct Ring {
  Rank next, prev;
};

// Arrived messages are matched earliest first, per (source, tag), with wildcards.
int UnexpectedOrder(transport::Bootstrap& job, DataPlane& plane, Ring ring) {
  const int tags[] = {5, 6, 5, 7};
  std::vector<std::vector<char>> out;
  for (int i = 0; i < 4; ++i) out.push_back(TestBytes(10 + i, i));
  for (int i = 0; i < 4; ++i) {
    CHECK_OK(plane.Send(out[i].data(), out[i].size(), ring.next, tags[i], kContext));
  }
  CHECK_OK(AwaitArrival(plane, ring.prev, 7));
  MessageStatus status;
  bool found = false;
  CHECK_OK(plane.Iprobe(ring.prev, 6, kContext, &found, &status));
  CHECK(found && status.count == 11 && status.tag == 6, "iprobe tag 6: count " << status.count);
  CHECK_OK(plane.Iprobe(ring.prev, 99, kContext, &found, nullptr));
  CHECK(!found, "iprobe found a tag nobody sent");
  std::vector<char> in(64);
  const struct {
    Rank source;
    int32_t tag;
    int expect;
  } receives[] = {
      {ring.prev, 5, 0}, {kAnySource, kAnyTag, 1}, {ring.prev, kAnyTag, 2}, {kAnySource, 7, 3}};
  for (const auto& r : receives) {
    CHECK_OK(plane.Recv(in.data(), in.size(), r.source, r.tag, kContext, &status));
    CHECK(status.source == ring.prev && status.tag == tags[r.expect] &&
              status.count == out[r.expect].size() &&
              std::memcmp(in.data(), out[r.expect].data(), status.count) == 0,
          "receive (" << r.source << ", " << r.tag << ") got tag " << status.tag << ", "
                      << status.count << " bytes; expected message " << r.expect);
  }
  CHECK(plane.unexpected_count() == 0, plane.unexpected_count() << " messages left over");
  CHECK_OK(job.Fence(false));
  return 0;
}

// Posted receives are matched earliest first: a wildcard posted first takes the message.
int PostedOrder(transport::Bootstrap& job, DataPlane& plane, Ring ring) {
  std::vector<char> in[3] = {std::vector<char>(64), std::vector<char>(64), std::vector<char>(64)};
  std::vector<Request*> requests(3);
  CHECK_OK(plane.Irecv(in[0].data(), 64, kAnySource, kAnyTag, kContext, &requests[0]));
  CHECK_OK(plane.Irecv(in[1].data(), 64, ring.prev, 9, kContext, &requests[1]));
  CHECK_OK(plane.Irecv(in[2].data(), 64, ring.prev, kAnyTag, kContext, &requests[2]));
  CHECK(plane.HasAnySourceReceive(kContext), "no ANY_SOURCE receive seen as posted");
  CHECK_OK(job.Fence(false));  // every receive is posted before anything is sent
  const int tags[] = {9, 9, 4};
  std::vector<std::vector<char>> out;
  for (int i = 0; i < 3; ++i) out.push_back(TestBytes(20 + i, 10 + i));
  for (int i = 0; i < 3; ++i) {
    CHECK_OK(plane.Send(out[i].data(), out[i].size(), ring.next, tags[i], kContext));
  }
  std::vector<MessageStatus> statuses(3);
  CHECK_OK(plane.Waitall(requests, statuses, Soon()));
  for (int i = 0; i < 3; ++i) {
    CHECK(requests[i] == nullptr, "waitall left a handle");
    CHECK(statuses[i].tag == tags[i] && statuses[i].count == out[i].size() &&
              std::memcmp(in[i].data(), out[i].data(), out[i].size()) == 0,
          "receive " << i << " got tag " << statuses[i].tag);
  }
  CHECK(!plane.HasAnySourceReceive(kContext), "ANY_SOURCE receive still counted as posted");
  CHECK_OK(job.Fence(false));
  return 0;
}

// Peak resident memory in KiB (VmHWM), after resetting it (Linux >= 4.0); -1 if unknown.
long ResetPeakKib() {
  std::ofstream("/proc/self/clear_refs") << "5";
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

// A message far larger than the receive buffer: the receiver must not allocate (or touch) the
// sender's length to drop what does not fit. Rank 0 sends 64 MiB of untouched pages to rank 1,
// whose peak memory is measured (a sender's transport may touch its own buffer).
int HugeTruncation(transport::Bootstrap& job, DataPlane& plane) {
  constexpr size_t kHuge = size_t{64} << 20;
  if (job.size() < 2 || job.rank() > 1) return 0;
  if (job.rank() == 0) {
    void* out = mmap(nullptr, kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(out != MAP_FAILED, "mmap of " << kHuge << " bytes");
    static_cast<char*>(out)[0] = 'h';
    CHECK_OK(plane.Send(out, kHuge, 1, 42, kContext));
    munmap(out, kHuge);
    return 0;
  }
  char in[17];
  std::memset(in, 'z', sizeof(in));
  const long before = ResetPeakKib();
  MessageStatus status;
  const Status truncated = plane.Recv(in, 16, 0, 42, kContext, &status);
  const long after = ResetPeakKib();
  CHECK(truncated.code() == RFT_ERR_TRUNCATE && status.count == 16 &&
            status.message_length == kHuge && in[0] == 'h' && in[16] == 'z',
        "64 MiB into 16 bytes: " << truncated.ToString() << ", count " << status.count);
  // Half the message would mean it was staged somewhere; the peak grows by little otherwise.
  CHECK(before < 0 || after - before < static_cast<long>(kHuge / 1024 / 2),
        "receiving a truncated 64 MiB message raised the peak memory by " << (after - before)
                                                                          << " KiB");
  return 0;
}

// Sizes around the eager/rendezvous switch, each through the posted and the unexpected path,
// and truncation on both protocols.
int SizesAndTruncation(transport::Bootstrap& job, DataPlane& plane, Ring ring) {
  const size_t limit = plane.options().eager_limit;
  const size_t sizes[] = {0, 1, limit - 1, limit, limit + 1, 3 * limit + 7, size_t{1} << 20};
  int seed = 100;
  for (size_t size : sizes) {
    for (bool posted_first : {true, false}) {
      const std::vector<char> out = TestBytes(size, ++seed);
      std::vector<char> in(size + 16, 'z');
      Request* receive = nullptr;
      Request* send = nullptr;
      if (posted_first) {
        CHECK_OK(plane.Irecv(in.data(), in.size(), ring.prev, 40, kContext, &receive));
        CHECK_OK(job.Fence(false));
        CHECK_OK(plane.Isend(out.data(), size, ring.next, 40, kContext, &send));
      } else {
        CHECK_OK(plane.Isend(out.data(), size, ring.next, 40, kContext, &send));
        CHECK_OK(AwaitArrival(plane, ring.prev, 40));
        CHECK_OK(plane.Irecv(in.data(), in.size(), ring.prev, 40, kContext, &receive));
      }
      MessageStatus status;
      CHECK_OK(plane.Wait(&receive, &status, Soon()));
      CHECK_OK(plane.Wait(&send, nullptr, Soon()));
      CHECK(
          status.count == size && std::equal(out.begin(), out.end(), in.begin()) && in[size] == 'z',
          size << " bytes (" << (posted_first ? "posted" : "unexpected") << "): got "
               << status.count);
      CHECK_OK(job.Fence(false));
    }
  }
  for (size_t size : {size_t{100}, 4 * limit}) {
    const std::vector<char> out = TestBytes(size, 7);
    std::vector<char> in(41, 'z');
    Request* send = nullptr;
    CHECK_OK(plane.Isend(out.data(), size, ring.next, 41, kContext, &send));
    MessageStatus status;
    const Status truncated = plane.Recv(in.data(), 40, ring.prev, 41, kContext, &status);
    CHECK(truncated.code() == RFT_ERR_TRUNCATE, size << " bytes into 40: " << truncated.ToString());
    CHECK(truncated.message().find(std::to_string(size)) != std::string::npos,
          "the truncation message does not name the length: " << truncated.message());
    CHECK(status.count == 40 && status.message_length == size && status.error == RFT_ERR_TRUNCATE,
          "truncated status: count " << status.count << ", length " << status.message_length);
    CHECK(std::memcmp(in.data(), out.data(), 40) == 0 && in[40] == 'z',
          "truncated receive wrote wrong bytes or past the buffer");
    CHECK_OK(plane.Wait(&send, nullptr, Soon()));  // the sender does not see truncation
  }
  CHECK_OK(job.Fence(false));
  if (int rc = HugeTruncation(job, plane)) return rc;
  CHECK_OK(job.Fence(false));
  return 0;
}

// Test, Testall, Testany, Waitany, Waitall with null handles, and Cancel.
int CompletionCalls(transport::Bootstrap& job, DataPlane& plane, Ring ring) {
  char a[8], b[8];
  std::vector<Request*> requests = {nullptr, nullptr, nullptr};
  CHECK_OK(plane.Irecv(a, sizeof(a), ring.prev, 30, kContext, &requests[1]));
  CHECK_OK(plane.Irecv(b, sizeof(b), ring.prev, 31, kContext, &requests[2]));
  bool done = true;
  CHECK_OK(plane.Test(&requests[1], &done, nullptr));
  CHECK(!done && requests[1] != nullptr, "test completed a receive nobody sent to");
  size_t index = 0;
  CHECK_OK(plane.Testany(requests, &index, &done, nullptr));
  CHECK(!done && index == DataPlane::kNoIndex, "testany with nothing complete");
  CHECK_OK(plane.Testall(requests, &done, {}));
  CHECK(!done && requests[1] != nullptr && requests[2] != nullptr, "testall released requests");
  CHECK_OK(job.Fence(false));
  CHECK_OK(plane.Send("tag31", 6, ring.next, 31, kContext));
  MessageStatus status;
  CHECK_OK(plane.Waitany(requests, &index, &status, Soon()));
  CHECK(index == 2 && requests[2] == nullptr && status.tag == 31 && std::strcmp(b, "tag31") == 0,
        "waitany returned index " << index);
  CHECK_OK(job.Fence(false));  // nobody sends tag 30 before every waitany returned
  CHECK_OK(plane.Send("tag30", 6, ring.next, 30, kContext));
  const Deadline deadline = Soon();
  for (done = false; !done && !deadline.expired();) {
    CHECK_OK(plane.Testall(requests, &done, {}));
  }
  CHECK(done && requests[1] == nullptr && std::strcmp(a, "tag30") == 0, "testall never completed");
  CHECK_OK(plane.Waitany(requests, &index, nullptr));
  CHECK(index == DataPlane::kNoIndex, "waitany over null handles returned " << index);
  std::vector<MessageStatus> statuses(3);
  CHECK_OK(plane.Waitall(requests, statuses));

  Request* cancelled = nullptr;
  CHECK_OK(plane.Irecv(a, sizeof(a), ring.prev, 32, kContext, &cancelled));
  CHECK_OK(plane.Cancel(cancelled));
  CHECK_OK(plane.Wait(&cancelled, &status, Soon()));
  CHECK(status.cancelled, "cancelled receive not marked cancelled");
  CHECK_OK(job.Fence(false));
  return 0;
}

int DeadlinesAndArguments(DataPlane& plane) {
  char byte = 0;
  Request* request = nullptr;
  CHECK_OK(plane.Irecv(&byte, 1, plane.rank(), 34, kContext, &request));
  const Status timeout =
      plane.Wait(&request, nullptr, Deadline::After(std::chrono::milliseconds(50)));
  CHECK(timeout.code() == RFT_ERR_TIMEOUT && request != nullptr, timeout.ToString());
  CHECK_OK(plane.Cancel(request));
  CHECK_OK(plane.Wait(&request, nullptr));

  const uint32_t n = plane.size();
  struct {
    Status status;
    std::string names;
  } bad[] = {
      {plane.Isend(&byte, 1, n, 0, kContext, &request), std::to_string(n)},
      {plane.Isend(&byte, 1, 0, -5, kContext, &request), "-5"},
      {plane.Isend(nullptr, 3, 0, 0, kContext, &request), "null"},
      {plane.Irecv(&byte, 1, n + 5, 0, kContext, &request), std::to_string(n + 5)},
      {plane.Irecv(&byte, 1, 0, -2, kContext, &request), "-2"},
      {plane.Irecv(&byte, 1, 0, 0, 1u << 30, &request), std::to_string(1u << 30)},
      {plane.Cancel(nullptr), "null"},
  };
  for (const auto& b : bad) {
    CHECK(b.status.code() == RFT_ERR_ARG && b.status.message().find(b.names) != std::string::npos,
          "bad argument not named (" << b.names << "): " << b.status.ToString());
  }
  std::vector<Request*> two(2, nullptr);
  std::vector<MessageStatus> one(1);
  CHECK(plane.Waitall(two, one).code() == RFT_ERR_ARG, "waitall with too few statuses");
  CHECK(plane.requests_in_use() == 0, plane.requests_in_use() << " requests leaked");
  return 0;
}

// Malformed and foreign messages are dropped and counted; nothing else changes.
int MalformedInput(DataPlane& plane, uint32_t job_token) {
  WireHeader valid;
  valid.source = plane.rank();
  valid.context_id = kContext;
  valid.tag = 50;
  valid.length = 4;
  valid.job_token = job_token;
  const std::byte payload[4] = {};
  auto inject = [&](WireHeader h, size_t header_bytes, size_t payload_bytes) {
    std::array<std::byte, transport::kWireHeaderSize> bytes;
    transport::EncodeHeader(h, bytes);
    DataPlaneTestAccess::Inject(plane, std::span(bytes).first(header_bytes),
                                std::span(payload).first(payload_bytes));
  };
  CHECK_OK(plane.SetContextEpoch(kContext + 1, 5));
  const size_t queued = plane.unexpected_count();
  const uint64_t dropped = plane.drops().total();
  struct Case {
    const char* what;
    WireHeader header;
    size_t header_bytes, payload_bytes;
    DecodeError reason;
  };
  std::vector<Case> cases;
  auto with = [&](auto change) {
    WireHeader h = valid;
    change(h);
    return h;
  };
  cases.push_back({"short header", valid, 20, 4, DecodeError::kTooShort});
  cases.push_back(
      {"version", with([](WireHeader& h) { h.version = 9; }), 32, 4, DecodeError::kBadVersion});
  cases.push_back({"length", valid, 32, 3, DecodeError::kLengthMismatch});
  cases.push_back(
      {"job", with([](WireHeader& h) { h.job_token ^= 1; }), 32, 4, DecodeError::kForeignJob});
  cases.push_back({"source", with([&](WireHeader& h) { h.source = plane.size(); }), 32, 4,
                   DecodeError::kBadSource});
  cases.push_back({"tag", with([](WireHeader& h) { h.tag = -3; }), 32, 4, DecodeError::kBadTag});
  cases.push_back({"type", with([](WireHeader& h) { h.type = transport::MessageType::kControl; }),
                   32, 4, DecodeError::kUnknownType});
  cases.push_back({"context", with([](WireHeader& h) { h.context_id = 1u << 30; }), 32, 4,
                   DecodeError::kUnknownContext});
  // The verbs backend's connection messages (docs/wire_format.md, types 6 to 12): never from
  // this process itself, and a request carries nothing.
  cases.push_back({"verbs request with a payload",
                   with([](WireHeader& h) { h.type = transport::MessageType::kVerbsAsk; }), 32, 4,
                   DecodeError::kBadPayload});
  cases.push_back({"verbs refusal with a payload",
                   with([](WireHeader& h) { h.type = transport::MessageType::kVerbsRefuse; }), 32,
                   4, DecodeError::kBadPayload});
  // A verbs pair's close (types 9 to 12) carries nothing, and fits only where a close stands.
  for (transport::MessageType type :
       {transport::MessageType::kVerbsClose, transport::MessageType::kVerbsStay,
        transport::MessageType::kVerbsClosing, transport::MessageType::kVerbsClosed}) {
    cases.push_back({"verbs close message with a payload",
                     with([type](WireHeader& h) { h.type = type; }), 32, 4,
                     DecodeError::kBadPayload});
  }
  cases.push_back({"verbs address of 4 bytes",
                   with([](WireHeader& h) { h.type = transport::MessageType::kVerbsAddress; }), 32,
                   4, DecodeError::kBadPayload});
  cases.push_back({"epoch", with([](WireHeader& h) {
                     h.context_id = kContext + 1;
                     h.epoch = 4;
                   }),
                   32, 4, DecodeError::kStaleEpoch});
  for (const Case& c : cases) {
    const uint64_t before = plane.drops().count(c.reason);
    inject(c.header, c.header_bytes, c.payload_bytes);
    CHECK(plane.drops().count(c.reason) == before + 1,
          c.what << ": not counted as " << transport::DecodeErrorName(c.reason));
  }
  CHECK(plane.drops().total() == dropped + cases.size(), "drops counted twice or not at all");
  CHECK(plane.unexpected_count() == queued, "a malformed message was queued");
  // A valid message through the same path is received.
  inject(valid, 32, 4);
  char in[4] = {1, 1, 1, 1};
  MessageStatus status;
  CHECK_OK(plane.Recv(in, sizeof(in), plane.rank(), 50, kContext, &status));
  CHECK(status.count == 4 && in[0] == 0, "the valid injected message was not received");
  return 0;
}

// A context id reused with a newer epoch: what its older life left unreceived is discarded
// (never matched by the new life's receives); what the new life sent early stays receivable.
int ReusedContext(DataPlane& plane, uint32_t job_token) {
  constexpr uint32_t kReused = kContext + 3;
  CHECK_OK(plane.SetContextEpoch(kReused, 2));
  auto inject = [&](uint32_t epoch, std::byte value) {
    WireHeader h;
    h.source = plane.rank();
    h.context_id = kReused;
    h.epoch = epoch;
    h.tag = 70;
    h.length = 1;
    h.job_token = job_token;
    std::array<std::byte, transport::kWireHeaderSize> bytes;
    transport::EncodeHeader(h, bytes);
    const std::byte payload[1] = {value};
    DataPlaneTestAccess::Inject(plane, bytes, payload);
  };
  inject(2, std::byte{2});  // the old life
  inject(3, std::byte{3});  // the new life, early
  inject(2, std::byte{2});
  CHECK(plane.unexpected_count() >= 3, "the injected messages were not queued");
  const uint64_t stale = plane.drops().count(DecodeError::kStaleEpoch);
  CHECK_OK(plane.SetContextEpoch(kReused, 3));
  CHECK(plane.drops().count(DecodeError::kStaleEpoch) == stale + 2,
        "the old life's two messages were not discarded");
  std::byte in[1] = {std::byte{0}};
  MessageStatus status;
  CHECK_OK(plane.Recv(in, 1, plane.rank(), 70, kReused, &status));
  CHECK(in[0] == std::byte{3},
        "received " << static_cast<int>(in[0]) << ", expected the new life's 3");
  bool found = true;
  CHECK_OK(plane.Iprobe(kAnySource, kAnyTag, kReused, &found, &status));
  CHECK(!found, "a message of the old life is still receivable");
  return 0;
}

// The same-node rendezvous' own messages fed to the receive path: malformed ones are dropped
// and counted; a request naming memory that cannot be read fails the receive with a clear
// error (and tells the "sender" so); a valid one is read, with truncation; a done message
// naming no pending send is dropped.
int CmaInput(DataPlane& plane, uint32_t job_token) {
  using transport::RendezvousDescriptor;
  const Rank me = plane.rank();
  auto inject = [&](transport::MessageType type, uint32_t epoch, std::span<const std::byte> body) {
    WireHeader h;
    h.type = type;
    h.source = me;
    h.context_id = kContext + 1;  // epoch 5 (MalformedInput set it)
    h.epoch = epoch;
    h.tag = 60;
    h.length = body.size();
    h.job_token = job_token;
    std::array<std::byte, transport::kWireHeaderSize> header;
    transport::EncodeHeader(h, header);
    DataPlaneTestAccess::Inject(plane, header, body);
  };
  auto request_to_send = [&](const void* address, uint64_t length, uint32_t epoch) {
    std::array<std::byte, transport::kRendezvousDescriptorSize> body;
    transport::EncodeRendezvousDescriptor({.address = reinterpret_cast<uint64_t>(address),
                                           .length = length,
                                           .cookie = 1,
                                           .sequence = 1},
                                          body);
    inject(transport::MessageType::kRendezvousRequest, epoch, body);
  };
  // Every done message below names no pending send (cookie 1): each is dropped on arrival.
  const uint64_t bad_before = plane.drops().count(DecodeError::kBadPayload);
  uint64_t bad_expected = bad_before;
  auto await_bad_payloads = [&]() -> Status {
    const Deadline deadline = Soon();
    while (plane.drops().count(DecodeError::kBadPayload) < bad_expected) {
      plane.Progress();
      if (deadline.expired()) return TimeoutError("a rendezvous done message never arrived");
    }
    return Status::Ok();
  };

  const std::array<std::byte, 31> short_descriptor{};
  inject(transport::MessageType::kRendezvousRequest, 5, short_descriptor);
  const std::array<std::byte, 15> short_done{};
  inject(transport::MessageType::kRendezvousDone, 0, short_done);
  const std::array<std::byte, transport::kRendezvousDoneSize> unknown_done{std::byte{1}};
  inject(transport::MessageType::kRendezvousDone, 0, unknown_done);
  bad_expected += 3;
  CHECK(plane.drops().count(DecodeError::kBadPayload) == bad_expected,
        "malformed rendezvous messages not counted as bad payload");

  // A stale epoch: dropped unread, and the "sender" is told (one more done to drop).
  const uint64_t stale = plane.drops().count(DecodeError::kStaleEpoch);
  request_to_send(nullptr, 8, 4);
  CHECK(plane.drops().count(DecodeError::kStaleEpoch) == stale + 1, "stale request not dropped");
  ++bad_expected;
  CHECK_OK(await_bad_payloads());

  // Unreadable memory (the first page is never mapped).
  char in[64];
  MessageStatus status;
  request_to_send(reinterpret_cast<void*>(uintptr_t{8}), 64, 5);
  const Status unreadable = plane.Recv(in, sizeof(in), me, 60, kContext + 1, &status);
  CHECK(unreadable.code() == RFT_ERR_OTHER, "unreadable rendezvous: " << unreadable.ToString());
  ++bad_expected;
  CHECK_OK(await_bad_payloads());

  // A readable one, received whole and truncated.
  const std::vector<char> data = TestBytes(40000, me * 100 + 61);
  request_to_send(data.data(), data.size(), 5);
  std::vector<char> whole(data.size() + 10);
  CHECK_OK(plane.Recv(whole.data(), whole.size(), me, 60, kContext + 1, &status));
  CHECK(status.count == data.size() && std::equal(data.begin(), data.end(), whole.begin()),
        "rendezvous read: " << status.count << " bytes or wrong content");
  request_to_send(data.data(), data.size(), 5);
  std::vector<char> part(1000);
  const Status truncated = plane.Recv(part.data(), part.size(), me, 60, kContext + 1, &status);
  CHECK(truncated.code() == RFT_ERR_TRUNCATE && status.count == 1000 &&
            status.message_length == data.size() &&
            std::equal(part.begin(), part.end(), data.begin()),
        "truncated rendezvous read: " << truncated.ToString());
  bad_expected += 2;
  CHECK_OK(await_bad_payloads());

  // The sender died and its pid now names another process that can be read (here: this one):
  // only its pidfd tells, and the receive must fail PROC_FAILED, not deliver that process's
  // bytes.
  int gate[2];
  CHECK(pipe(gate) == 0, "pipe");
  const pid_t child = fork();
  if (child == 0) {
    char byte;
    (void)!read(gate[0], &byte, 1);
    _exit(0);
  }
  const int dead = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  CHECK(dead >= 0, "pidfd_open of a child: " << std::strerror(errno));
  (void)!write(gate[1], "x", 1);
  waitpid(child, nullptr, 0);
  close(gate[0]);
  close(gate[1]);
  DataPlaneTestAccess::ReplacePeerProcess(plane, me, getpid(), dead);
  request_to_send(data.data(), data.size(), 5);
  std::vector<char> reused(data.size(), 'z');
  const Status gone = plane.Recv(reused.data(), reused.size(), me, 60, kContext + 1, &status);
  CHECK(gone.code() == RFT_ERR_PROC_FAILED,
        "read through a reused pid: " << gone.ToString() << " (expected PROC_FAILED)");
  DataPlaneTestAccess::ReplacePeerProcess(plane, me, getpid(),
                                          static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0)));
  CHECK(plane.requests_in_use() == 0, plane.requests_in_use() << " requests leaked");
  return 0;
}

}  // namespace

int Rules(transport::Bootstrap& job, DataPlane& plane) {
  const Rank n = job.size();
  const Ring ring{(job.rank() + 1) % n, (job.rank() + n - 1) % n};
  if (int rc = UnexpectedOrder(job, plane, ring)) return rc;
  if (int rc = PostedOrder(job, plane, ring)) return rc;
  if (int rc = SizesAndTruncation(job, plane, ring)) return rc;
  if (int rc = CompletionCalls(job, plane, ring)) return rc;
  if (int rc = DeadlinesAndArguments(plane)) return rc;
  if (int rc = MalformedInput(plane, job.job_token())) return rc;
  if (int rc = ReusedContext(plane, job.job_token())) return rc;
  if (plane.UsesCmaWith(job.rank())) {
    if (int rc = CmaInput(plane, job.job_token())) return rc;
  }
  if (int rc = Revocation(job, plane)) return rc;
  std::printf("rules ok n=%u eager_limit=%zu rendezvous=%s\n", n, plane.options().eager_limit,
              plane.UsesCmaWith(ring.next) ? "cma" : "ucx");
  return 0;
}

}  // namespace rft::testing
