// geerpc's overload benchmark (issue 30 point 3): the adaptive concurrency limit
// (server_options.limits.adaptive_concurrency) against none, in one run of one process.
//
//   geerpc_bench_overload [--rate N] [--seconds S] [--deadline-ms D] [--base-us B] [--knee K]
//                         [--max-handlers M] [--connections C]
//
// The server's one method slows down under load, as a server that thrashes does: a call takes
// base × (1 + (n / knee)²), n being the calls running at its start (so its throughput peaks at
// knee / (2 × base) calls per second, with knee calls running, and falls beyond), and it ignores
// its stop token, as most handlers do. An open-loop client (calls sent at `rate` per second
// whatever the answers, spread over C connections, each with a deadline of D ms) offers more than
// that peak. Printed, per setting (limit off, then on; each a fresh server):
//   overload limit=off|on offered_per_s=… goodput_per_s=… refused_per_s=… failed_per_s=…
//            p50_admitted_us=… p99_admitted_us=… final_limit=…
// goodput: calls answered successfully (within their deadline, which the client enforces);
// refused: answered busy at once, over the adaptive limit; failed: every other outcome (deadline
// passed, busy from the queue); admitted: every call not refused, whose latency is the time to its
// answer or to its deadline.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <geerpc/geerpc.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace overload {

using clock = std::chrono::steady_clock;

const char* flag(int argc, char** argv, std::string_view name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}

// The handler that slows down as more run at once.
struct Slowing {
  std::chrono::microseconds base{2000};
  double knee = 8;
  std::atomic<int> running{0};

  std::int32_t work(const std::int32_t& x) {
    const double n = running.fetch_add(1) + 1;
    const double slowdown = 1 + (n / knee) * (n / knee);
    std::this_thread::sleep_for(
        std::chrono::duration<double, std::micro>(static_cast<double>(base.count()) * slowdown));
    running.fetch_sub(1);
    return x;
  }
};
using SlowingApi = geerpc::service<"Slowing", geerpc::method<"Work", &Slowing::work>>;

struct settings {
  double rate = 3000;
  double seconds = 8;
  std::chrono::milliseconds deadline{100};
  int connections = 4;
  std::size_t max_handlers = 64;
};

// One call's outcome, written by its callback.
struct record {
  clock::time_point sent;
  clock::time_point done;
  geerpc::errc code{};
  bool refused = false;  // busy over the adaptive limit
};

struct figures {
  double offered = 0, goodput = 0, refused = 0, failed = 0;
  double p50_us = 0, p99_us = 0;
};

figures offer_load(const std::string& address, const settings& s) {
  std::vector<geerpc::client> clients;
  for (int c = 0; c < s.connections; ++c) clients.push_back(geerpc::dial<geerpc::threaded>(address));
  const auto total = static_cast<std::size_t>(s.rate * s.seconds);
  std::vector<record> records(total);
  std::atomic<std::size_t> completed{0};
  const auto start = clock::now();
  std::size_t sent = 0;
  while (sent < total) {
    const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
    const auto due = std::min(total, static_cast<std::size_t>(elapsed * s.rate));
    for (; sent < due; ++sent) {
      record& r = records[sent];
      r.sent = clock::now();
      clients[sent % clients.size()]
          .template async_call<std::int32_t>(geerpc::with_deadline(r.sent + s.deadline), "Slowing.Work",
                                             static_cast<std::int32_t>(sent))
          .then([&r, &completed](geerpc::result<std::int32_t> result) {
            r.done = clock::now();
            r.code = static_cast<geerpc::errc>(result.code().value());
            r.refused = !result && r.code == geerpc::errc::busy &&
                        result.error().message.find("adaptive concurrency limit") != std::string::npos;
            completed.fetch_add(1, std::memory_order_release);
          });
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double took = std::chrono::duration<double>(clock::now() - start).count();
  // Every call ends by its deadline at the latest.
  const auto give_up = clock::now() + s.deadline + std::chrono::seconds(5);
  while (completed.load(std::memory_order_acquire) < total && clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (completed.load(std::memory_order_acquire) < total) {
    std::fprintf(stderr, "overload: %zu calls never completed\n", total - completed.load());
    std::exit(1);
  }
  figures f;
  std::vector<double> admitted_us;
  std::size_t ok = 0, refused = 0;
  for (const record& r : records) {
    if (r.refused) {
      ++refused;
      continue;
    }
    if (r.code == geerpc::errc{}) ++ok;
    admitted_us.push_back(std::chrono::duration<double, std::micro>(r.done - r.sent).count());
  }
  std::sort(admitted_us.begin(), admitted_us.end());
  const auto at = [&](double q) {
    return admitted_us.empty()
               ? 0.0
               : admitted_us[std::min(admitted_us.size() - 1,
                                      static_cast<std::size_t>(q * static_cast<double>(admitted_us.size())))];
  };
  f.offered = static_cast<double>(total) / took;
  f.goodput = static_cast<double>(ok) / took;
  f.refused = static_cast<double>(refused) / took;
  f.failed = static_cast<double>(total - ok - refused) / took;
  f.p50_us = at(0.50);
  f.p99_us = at(0.99);
  return f;
}

void run(bool limit_on, Slowing& slowing, const settings& s) {
  geerpc::server_options opts;
  opts.threads.max_handlers = s.max_handlers;
  opts.limits.adaptive_concurrency.enabled = limit_on;
  geerpc::basic_server<geerpc::threaded> server(opts);
  server.add<SlowingApi>(slowing);
  const std::string address = server.listen("127.0.0.1:0");
  const figures f = offer_load(address, s);
  const std::size_t final_limit = server.adaptive_concurrency_limit();  // 0: off
  std::printf(
      "overload limit=%s offered_per_s=%.0f goodput_per_s=%.0f refused_per_s=%.0f failed_per_s=%.0f "
      "p50_admitted_us=%.0f p99_admitted_us=%.0f final_limit=%zu\n",
      limit_on ? "on" : "off", f.offered, f.goodput, f.refused, f.failed, f.p50_us, f.p99_us, final_limit);
  std::fflush(stdout);
  server.stop();
}

}  // namespace overload

int main(int argc, char** argv) {
  using namespace overload;
  settings s;
  s.rate = std::atof(flag(argc, argv, "--rate", "3000"));
  s.seconds = std::atof(flag(argc, argv, "--seconds", "8"));
  s.deadline = std::chrono::milliseconds(std::atoi(flag(argc, argv, "--deadline-ms", "100")));
  s.connections = std::max(1, std::atoi(flag(argc, argv, "--connections", "4")));
  s.max_handlers = static_cast<std::size_t>(std::max(1, std::atoi(flag(argc, argv, "--max-handlers", "64"))));
  Slowing slowing;
  slowing.base = std::chrono::microseconds(std::atoi(flag(argc, argv, "--base-us", "2000")));
  slowing.knee = std::max(1.0, std::atof(flag(argc, argv, "--knee", "8")));
  for (const bool on : {false, true}) {
    run(on, slowing, s);
    // The last run's handlers finish before the next server starts.
    while (slowing.running.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}
