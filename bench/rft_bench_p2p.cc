// rft_bench_p2p: point-to-point latency and bandwidth between two ranks, OSU style.
//
//   rftrun -n 2 rft_bench_p2p [--sizes 8,1024,1048576] [--json] [--iters N]
//
// Latency: ping-pong, one-way = round trip / 2, per-iteration median and p99.
// Bandwidth: rank 0 streams a window of messages, rank 1 acknowledges the window.
//
// Until the data plane (isend/irecv with tag matching) exists, this measures rft's UCX layer
// itself: active messages on endpoints with peer error handling (UcxWorker, EndpointTable),
// eager for small messages and UCX's rendezvous straight into the receive buffer for large
// ones — the paths the data plane will use. bench/compare_p2p.sh runs it beside ucx_perftest.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/clock.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/ucx/endpoint_table.h"
#include "transport/ucx/ucx_worker.h"

namespace {

using rft::Rank;
using rft::transport::ucx::EndpointTable;
using rft::transport::ucx::UcxWorker;

constexpr unsigned kAmId = 1;
constexpr int kWindow = 64;

// Receive side: counts arrivals; large (rendezvous) data is fetched into `buffer`.
struct Receiver {
  UcxWorker* worker = nullptr;
  std::vector<char> buffer;
  uint64_t arrived = 0;
  uint64_t pending_fetches = 0;
};

void OnFetched(void* request, ucs_status_t, size_t, void* user_data) {
  auto* receiver = static_cast<Receiver*>(user_data);
  --receiver->pending_fetches;
  ++receiver->arrived;
  ucp_request_free(request);
}

ucs_status_t OnMessage(void* arg, const void*, size_t, void* data, size_t length,
                       const ucp_am_recv_param_t* param) {
  auto* receiver = static_cast<Receiver*>(arg);
  if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    ucp_request_param_t request_param{};
    request_param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    request_param.cb.recv_am = OnFetched;
    request_param.user_data = receiver;
    void* request = ucp_am_recv_data_nbx(receiver->worker->get(), data, receiver->buffer.data(),
                                         std::min(length, receiver->buffer.size()), &request_param);
    if (request == nullptr) {
      ++receiver->arrived;  // completed in place
    } else if (!UCS_PTR_IS_ERR(request)) {
      ++receiver->pending_fetches;
    }
    return UCS_OK;
  }
  std::memcpy(receiver->buffer.data(), data, std::min(length, receiver->buffer.size()));
  ++receiver->arrived;
  return UCS_OK;
}

void Send(UcxWorker& worker, ucp_ep_h ep, const void* data, size_t size) {
  ucp_request_param_t param{};
  void* request = ucp_am_send_nbx(ep, kAmId, nullptr, 0, data, size, &param);
  if (request == nullptr) return;
  if (UCS_PTR_IS_ERR(request)) {
    std::fprintf(stderr, "send failed: %s\n", ucs_status_string(UCS_PTR_STATUS(request)));
    std::exit(1);
  }
  while (ucp_request_check_status(request) == UCS_INPROGRESS) worker.Progress();
  ucp_request_free(request);
}

void WaitArrivals(UcxWorker& worker, Receiver& receiver, uint64_t target) {
  while (receiver.arrived < target) ucp_worker_progress(worker.get());
}

int64_t Percentile(std::vector<int64_t>& values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p / 100 * values.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {8, 64, 1024, 8192, 65536, 1048576, 4194304};
  bool json = false;
  long fixed_iters = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--iters" && i + 1 < argc) {
      fixed_iters = std::atol(argv[++i]);
    } else if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* s = std::strtok(argv[++i], ","); s; s = std::strtok(nullptr, ",")) {
        sizes.push_back(std::strtoull(s, nullptr, 10));
      }
    } else {
      std::fprintf(stderr, "usage: rftrun -n 2 %s [--sizes 8,1024] [--iters N] [--json]\n",
                   argv[0]);
      return 2;
    }
  }
  auto init = rft::transport::Bootstrap::Init();
  if (!init.ok()) {
    std::fprintf(stderr, "%s\n", init.status().ToString().c_str());
    return 1;
  }
  auto& job = **init;
  if (job.size() != 2) {
    std::fprintf(stderr, "rft_bench_p2p needs exactly 2 ranks (got %u)\n", job.size());
    return 2;
  }
  auto context = rft::transport::ucx::UcxContext::Create();
  if (!context.ok()) return 1;
  auto worker_or = UcxWorker::Create(**context);
  if (!worker_or.ok()) return 1;
  UcxWorker& worker = **worker_or;
  Receiver receiver;
  receiver.worker = &worker;
  receiver.buffer.assign(*std::max_element(sizes.begin(), sizes.end()) + 64, 0);
  if (!worker.SetActiveMessageHandler(kAmId, OnMessage, &receiver).ok()) return 1;
  auto addresses = job.Exchange("bench.ucx", worker.address());
  if (!addresses.ok()) return 1;
  auto table = EndpointTable::Create(&worker, job.rank(), std::move(*addresses), nullptr);
  if (!table.ok()) return 1;
  const Rank peer = 1 - job.rank();
  ucp_ep_h ep = *(*table)->Get(peer);
  std::vector<char> send_buffer(receiver.buffer.size(), 'x');
  const bool leader = job.rank() == 0;

  if (leader && !json) {
    std::printf("# rft_bench_p2p: UCX active messages, peer error handling (n=2)\n");
    std::printf("%10s %10s %10s %10s %12s\n", "size", "iters", "p50_us", "p99_us", "MB/s");
  }
  uint64_t expected = 0;
  for (size_t size : sizes) {
    const long iters = fixed_iters > 0 ? fixed_iters
                       : size <= 8192  ? 20000
                       : size <= 65536 ? 5000
                                       : 500;
    const long warmup = iters / 10;
    std::vector<int64_t> samples;
    samples.reserve(iters);
    for (long i = 0; i < warmup + iters; ++i) {
      const int64_t start = rft::MonotonicNanos();
      if (leader) {
        Send(worker, ep, send_buffer.data(), size);
        WaitArrivals(worker, receiver, ++expected);
      } else {
        WaitArrivals(worker, receiver, ++expected);
        Send(worker, ep, send_buffer.data(), size);
      }
      if (i >= warmup) samples.push_back(rft::MonotonicNanos() - start);
    }
    // Bandwidth: windows of kWindow messages, one acknowledgement each.
    const long windows = std::max<long>(10, iters / kWindow / 4);
    const int64_t bw_start = rft::MonotonicNanos();
    for (long w = 0; w < windows; ++w) {
      if (leader) {
        for (int k = 0; k < kWindow; ++k) Send(worker, ep, send_buffer.data(), size);
        WaitArrivals(worker, receiver, ++expected);
      } else {
        expected += kWindow;
        WaitArrivals(worker, receiver, expected);
        Send(worker, ep, send_buffer.data(), 8);
      }
    }
    const double seconds = static_cast<double>(rft::MonotonicNanos() - bw_start) / 1e9;
    const double mb_s = static_cast<double>(size) * kWindow * windows / seconds / 1e6;
    if (leader) {
      const double p50 = static_cast<double>(Percentile(samples, 50)) / 2e3;  // one-way, us
      const double p99 = static_cast<double>(Percentile(samples, 99)) / 2e3;
      if (json) {
        std::printf(
            "{\"bench\":\"p2p_latency\",\"transport\":\"ucx_am\",\"n\":2,\"size\":%zu,"
            "\"iters\":%ld,\"p50_us\":%.3f,\"p99_us\":%.3f}\n",
            size, iters, p50, p99);
        std::printf(
            "{\"bench\":\"p2p_bandwidth\",\"transport\":\"ucx_am\",\"n\":2,\"size\":%zu,"
            "\"iters\":%ld,\"mb_s\":%.1f}\n",
            size, windows * kWindow, mb_s);
      } else {
        std::printf("%10zu %10ld %10.3f %10.3f %12.1f\n", size, iters, p50, p99, mb_s);
      }
      std::fflush(stdout);
    }
  }
  rft::Status status = job.Fence(false);  // nobody tears down while the other still sends
  table->reset();
  return status.ok() ? 0 : 1;
}
