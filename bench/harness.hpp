// geerpc's benchmark harness: the workloads of BENCHMARK.md with the same rules the peers follow
// (same call split, an untimed warm-up phase, nearest-rank percentiles, the same output line), so
// that geerpc's lines and the peers' compare side by side.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <latch>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace bench {

struct workload {
  std::string name = "W1";
  int connections = 1;
  int callers_per_connection = 1;
  long calls = 20000;  // timed, over all callers
  long warmup = 2000;  // untimed, over all callers
  bool echo = false;   // Echo of `payload` bytes instead of Sum
  int payload = 4096;
  int server_pid = 0;  // W5: the server whose memory is reported
};

inline workload preset(std::string_view name) {
  workload w;
  w.name = std::string(name);
  if (name == "W1") {
    w.calls = 20000;
  } else if (name == "W2") {
    w.callers_per_connection = 32, w.calls = 200000;
  } else if (name == "W3") {
    w.connections = 8, w.callers_per_connection = 4, w.calls = 200000;
  } else if (name == "W4") {
    w.callers_per_connection = 8, w.calls = 50000, w.echo = true;
  } else if (name == "W5") {
    w.connections = 1000, w.calls = 100000;
  } else {
    std::fprintf(stderr, "unknown workload %s\n", w.name.c_str());
    std::exit(2);
  }
  return w;
}

inline const char* flag(int argc, char** argv, std::string_view name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (name == argv[i]) return argv[i + 1];
  return fallback;
}

// Whether a flag without a value (--balanced) was given.
inline bool has_flag(int argc, char** argv, std::string_view name) {
  for (int i = 1; i < argc; ++i)
    if (name == argv[i]) return true;
  return false;
}

// --workload Wn [--calls N] [--warmup N] [--scale F] [--server-pid N]; --scale shrinks calls and
// warm-up for smoke runs, except W5's warm-up of 2 calls per connection.
inline workload parse(int argc, char** argv) {
  workload w = preset(flag(argc, argv, "--workload", "W1"));
  const double scale = std::atof(flag(argc, argv, "--scale", "1"));
  w.calls =
      std::max<long>(1, std::lround(std::atol(flag(argc, argv, "--calls", std::to_string(w.calls).c_str())) * scale));
  const char* warmup = flag(argc, argv, "--warmup", nullptr);
  w.warmup = warmup ? std::atol(warmup) : std::lround(static_cast<double>(w.warmup) * scale);
  w.server_pid = std::atoi(flag(argc, argv, "--server-pid", "0"));
  if (w.name == "W5" && !warmup) w.warmup = 2L * w.connections;
  return w;
}

// A field of /proc/<pid>/status ("VmRSS", "VmHWM", "Threads"); -1 when unreadable.
inline long proc_status(int pid, std::string_view field) {
  std::ifstream in(pid > 0 ? "/proc/" + std::to_string(pid) + "/status" : std::string("/proc/self/status"));
  std::string line;
  while (std::getline(in, line))
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':')
      return std::atol(line.c_str() + field.size() + 1);
  return -1;
}

struct result {
  double seconds = 0;
  std::vector<std::int64_t> latencies_ns;
  long errors = 0;
  long server_base_rss_kb = -1, server_idle_rss_kb = -1, server_peak_rss_kb = -1, server_idle_threads = -1;
};

inline double percentile_us(std::vector<std::int64_t>& v, double p) {
  if (v.empty()) return 0;
  std::size_t rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size())));
  rank = std::clamp<std::size_t>(rank, 1, v.size());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
  return static_cast<double>(v[rank - 1]) / 1000.0;
}

// call(connection, caller, i) makes one RPC and says whether its reply was right. Each caller makes
// calls / callers calls (one more for the first calls % callers), after its share of the warm-up.
// `before_timing` runs once every caller has warmed up and waits at the gate.
inline result run(const workload& w, const std::function<bool(int, int, long)>& call,
                  const std::function<void()>& before_timing = {}) {
  using clock = std::chrono::steady_clock;
  result r;
  if (w.server_pid > 0) r.server_base_rss_kb = proc_status(w.server_pid, "VmRSS");
  const int callers = w.connections * w.callers_per_connection;
  std::vector<std::vector<std::int64_t>> latencies(static_cast<std::size_t>(callers));
  std::atomic<long> errors{0};
  std::latch warmed(callers + 1), gate(1);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(callers));
  for (int t = 0; t < callers; ++t) {
    threads.emplace_back([&, t] {
      const int connection = t % w.connections, caller = t / w.connections;
      const long mine = w.calls / callers + (t < w.calls % callers ? 1 : 0);
      const long warm = w.warmup / callers + (t < w.warmup % callers ? 1 : 0);
      long failed = 0;
      for (long i = 0; i < warm; ++i) failed += call(connection, caller, i) ? 0 : 1;
      auto& mine_ns = latencies[static_cast<std::size_t>(t)];
      mine_ns.reserve(static_cast<std::size_t>(mine));
      warmed.count_down();
      gate.wait();
      for (long i = 0; i < mine; ++i) {
        const auto start = clock::now();
        failed += call(connection, caller, warm + i) ? 0 : 1;
        mine_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count());
      }
      errors += failed;
    });
  }
  warmed.arrive_and_wait();
  if (w.server_pid > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the server settle, as the peers do
    r.server_idle_rss_kb = proc_status(w.server_pid, "VmRSS");
    r.server_idle_threads = proc_status(w.server_pid, "Threads");
  }
  if (before_timing) before_timing();
  const auto t0 = clock::now();
  gate.count_down();
  for (auto& thread : threads) thread.join();
  r.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  if (w.server_pid > 0) r.server_peak_rss_kb = proc_status(w.server_pid, "VmHWM");
  for (auto& l : latencies) r.latencies_ns.insert(r.latencies_ns.end(), l.begin(), l.end());
  r.errors = errors.load();
  return r;
}

inline void print(const std::string& peer, const workload& w, result& r) {
  const double per_second = r.seconds > 0 ? static_cast<double>(r.latencies_ns.size()) / r.seconds : 0;
  const double p50 = percentile_us(r.latencies_ns, 0.50), p99 = percentile_us(r.latencies_ns, 0.99);
  std::printf("bench %s %s calls_per_s=%ld p50_us=%.2f p99_us=%.2f", peer.c_str(), w.name.c_str(),
              std::lround(per_second), p50, p99);
  if (w.echo) std::printf(" mb_per_s=%.2f", per_second * w.payload * 2.0 / 1e6);
  if (w.server_pid > 0) std::printf(" rss_kb=%ld idle_rss_kb=%ld", r.server_peak_rss_kb, r.server_idle_rss_kb);
  std::printf("\n");
  std::fflush(stdout);
  if (w.server_pid > 0)
    std::fprintf(
        stderr,
        "# %s %s server: base_rss_kb=%ld idle_rss_kb=%ld idle_kb_per_conn=%.1f peak_rss_kb=%ld threads_idle=%ld\n",
        peer.c_str(), w.name.c_str(), r.server_base_rss_kb, r.server_idle_rss_kb,
        static_cast<double>(r.server_idle_rss_kb - r.server_base_rss_kb) / w.connections, r.server_peak_rss_kb,
        r.server_idle_threads);
  if (r.errors)
    std::fprintf(stderr, "WARNING %s %s: %ld wrong or failed replies\n", peer.c_str(), w.name.c_str(), r.errors);
}

}  // namespace bench
