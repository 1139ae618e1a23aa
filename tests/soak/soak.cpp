// Soak: a bounded load run against one threaded server. 200 connections, calls whose handlers take
// random times around the handle timeout (some ignoring their stop_token), callers' deadlines, and
// a killer thread closing random connections under their callers. At the end every call must have
// returned the right reply or an error it was entitled to, and the process must be back to its
// baseline threads and memory. Run it under ASan for LeakSanitizer's verdict too.
//
//   geerpc_soak [--seconds N] [--connections N] [--callers N] [--handle-timeout-ms N]
//               [--max-rss-growth-kb N]   (0: no memory verdict, for sanitizer builds)
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <geerpc/geerpc.hpp>
#include <memory>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

struct Work {
  std::uint32_t id;
  std::uint32_t delay_us;
  std::string payload;
};
struct Done {
  std::uint32_t id;
  std::uint32_t payload_size;
};

struct Soak {
  Done work(const Work& w, std::stop_token stop) {  // gives up when told to
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, std::chrono::microseconds(w.delay_us), [] { return false; });
    return {w.id, static_cast<std::uint32_t>(w.payload.size())};
  }
  Done stubborn(const Work& w) {  // never looks at a stop_token
    std::this_thread::sleep_for(std::chrono::microseconds(w.delay_us));
    return {w.id, static_cast<std::uint32_t>(w.payload.size())};
  }
  std::uint64_t sum(const std::vector<std::uint32_t>& v) {
    std::uint64_t total = 0;
    for (auto x : v) total += x;
    return total;
  }
};

using SoakApi = geerpc::service<"Soak", geerpc::method<"Work", &Soak::work>,
                                geerpc::method<"Stubborn", &Soak::stubborn>, geerpc::method<"Sum", &Soak::sum>>;

long proc_status_kb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::strtol(line.c_str() + std::strlen(field), nullptr, 10);
  return -1;
}
int threads_now() { return static_cast<int>(proc_status_kb("Threads:")); }
long rss_kb() {
  ::malloc_trim(0);  // give freed heap back first, so RSS shows what is still in use
  return proc_status_kb("VmRSS:");
}

struct outcomes {
  std::atomic<long> right{0}, wrong{0}, handle_timeout{0}, deadline{0}, closed_after_kill{0}, unexpected{0};
  std::atomic<long> kills{0}, redials{0};
};

// One connection, shared by callers and the killer: calls and kills take it shared, a redial
// takes it exclusively. `generation` counts kills, so a caller knows whether its connection_closed
// was earned.
struct slot {
  std::shared_mutex mutex;
  geerpc::client client;
  std::atomic<long> generation{0};  // kills so far
  long dialed_at = 0;               // the generation when `client` was dialed (guarded by mutex)
};

// Prints the first few surprises in full, then only counts them.
void report(std::atomic<long>& count, const std::string& what) {
  if (count.fetch_add(1) < 10) std::fprintf(stderr, "unexpected: %s\n", what.c_str());
}

struct config {
  int seconds = 30;
  int connections = 200;
  int callers = 16;
  int handle_timeout_ms = 50;
  long max_rss_growth_kb = 16 * 1024;  // 0: do not judge memory (sanitizers keep freed memory)
};

config parse(int argc, char** argv) {
  config c;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--seconds")
      c.seconds = value;
    else if (flag == "--connections")
      c.connections = value;
    else if (flag == "--callers")
      c.callers = value;
    else if (flag == "--handle-timeout-ms")
      c.handle_timeout_ms = value;
    else if (flag == "--max-rss-growth-kb")
      c.max_rss_growth_kb = value;
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const config cfg = parse(argc, argv);
  const geerpc::options dial_options{
      .timeouts = {.connect = 5s, .handle = std::chrono::milliseconds(cfg.handle_timeout_ms)}};
  const auto handle_timeout = std::chrono::microseconds(cfg.handle_timeout_ms * 1000);

  Soak soak;
  geerpc::server server({.threads = {.handlers = 8}});
  server.add<SoakApi>(soak);
  const std::string address = server.listen("127.0.0.1:0");
  {  // warm the process (scheduler, allocator arenas, thread stacks) before taking the baseline
    auto warm = geerpc::dial(address, dial_options);
    for (int i = 0; i < 100; ++i) (void)warm.try_call<std::uint64_t>("Soak.Sum", std::vector<std::uint32_t>{1, 2});
  }
  const int threads_before = threads_now();
  const long rss_before = rss_kb();

  outcomes out;
  {
    std::vector<std::unique_ptr<slot>> slots;
    for (int i = 0; i < cfg.connections; ++i) {
      slots.push_back(std::make_unique<slot>());
      slots.back()->client = geerpc::dial(address, dial_options);
    }
    const auto end = clock_type::now() + std::chrono::seconds(cfg.seconds);
    std::atomic<bool> running{true};

    auto caller = [&](unsigned seed) {
      std::mt19937 rng(seed);
      std::uint32_t next_id = seed * 1'000'000u;
      while (running.load(std::memory_order_relaxed)) {
        slot& s = *slots[rng() % slots.size()];
        const int pick = static_cast<int>(rng() % 100);
        long generation = 0;
        bool killed_before = false, closed = false;
        {
          std::shared_lock lock(s.mutex);
          generation = s.generation.load();
          killed_before = generation != s.dialed_at;  // this client was closed by the killer already
          if (pick < 60) {                            // a quick call: must be exactly right
            std::vector<std::uint32_t> v(rng() % 64);
            std::uint64_t expected = 0;
            for (auto& x : v) expected += (x = rng() % 1000);
            auto r = s.client.try_call<std::uint64_t>(geerpc::with_timeout(5s), "Soak.Sum", v);
            if (r)
              (*r == expected ? out.right : out.wrong).fetch_add(1);
            else if (r.code() == geerpc::errc::connection_closed)
              closed = true;
            else if (r.code() == geerpc::errc::handle_timeout)  // it waited behind deaf handlers
              out.handle_timeout.fetch_add(1);
            else
              report(out.unexpected, r.message());
          } else {  // handlers around the handle timeout, some deaf to their stop_token
            const bool deaf = pick >= 90;
            const Work w{++next_id, static_cast<std::uint32_t>(rng() % (2 * handle_timeout.count())),
                         std::string(rng() % 2048, 'p')};
            const bool caller_deadline = rng() % 4 == 0;
            const auto ctx =
                caller_deadline
                    ? geerpc::with_timeout(std::chrono::microseconds(rng() % (2 * handle_timeout.count()) + 1))
                    : geerpc::context{};
            auto r = s.client.try_call<Done>(ctx, deaf ? "Soak.Stubborn" : "Soak.Work", w);
            if (r) {
              (r->id == w.id && r->payload_size == w.payload.size() ? out.right : out.wrong).fetch_add(1);
            } else if (r.code() == geerpc::errc::handle_timeout) {
              out.handle_timeout.fetch_add(1);
            } else if (r.code() == geerpc::errc::deadline_exceeded && caller_deadline) {
              out.deadline.fetch_add(1);
            } else if (r.code() == geerpc::errc::connection_closed) {
              closed = true;
            } else {
              report(out.unexpected, r.message());
            }
          }
        }
        if (closed) {
          // Earned only if the killer struck this connection since the call began.
          if (killed_before || s.generation.load() != generation)
            out.closed_after_kill.fetch_add(1);
          else
            report(out.unexpected, "connection_closed without a kill");
          std::unique_lock lock(s.mutex);
          if (!s.client.is_open()) {
            s.dialed_at = s.generation.load();
            s.client = geerpc::dial(address, dial_options);
            out.redials.fetch_add(1);
          }
        }
      }
    };
    auto killer = [&] {
      std::mt19937 rng(12345);
      while (running.load(std::memory_order_relaxed)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5 + rng() % 20));
        slot& s = *slots[rng() % slots.size()];
        std::shared_lock lock(s.mutex);
        s.generation.fetch_add(1);
        s.client.close();  // under its callers' feet
        out.kills.fetch_add(1);
      }
    };

    std::vector<std::jthread> threads;
    for (int i = 0; i < cfg.callers; ++i) threads.emplace_back(caller, static_cast<unsigned>(i + 1));
    threads.emplace_back(killer);
    while (clock_type::now() < end) std::this_thread::sleep_for(100ms);
    running = false;
    threads.clear();
    for (auto& s : slots) s->client.close();
  }

  // Handlers that ignored their stop_token may still be sleeping: they are bounded by the largest
  // delay, so wait for them (bounded), then compare with the baseline.
  const auto settle_deadline = clock_type::now() + 10s;
  while ((server.inflight() != 0 || server.connection_count() != 0) && clock_type::now() < settle_deadline)
    std::this_thread::sleep_for(10ms);
  const bool settled = server.inflight() == 0 && server.connection_count() == 0;
  // Pool threads started for the burst retire after the pool's idle timeout.
  while (threads_now() != threads_before && clock_type::now() < settle_deadline) std::this_thread::sleep_for(10ms);
  const int threads_after = threads_now();
  const long rss_after = rss_kb();

  const long calls = out.right + out.wrong + out.handle_timeout + out.deadline + out.closed_after_kill + out.unexpected;
  std::printf(
      "soak: %d s, %d connections, %d callers: %ld calls: %ld right, %ld wrong, %ld handle_timeout, %ld "
      "deadline_exceeded, %ld connection_closed after a kill, %ld unexpected; %ld kills, %ld redials\n",
      cfg.seconds, cfg.connections, cfg.callers, calls, out.right.load(), out.wrong.load(), out.handle_timeout.load(),
      out.deadline.load(), out.closed_after_kill.load(), out.unexpected.load(), out.kills.load(), out.redials.load());
  std::printf("soak: threads %d -> %d, rss %ld KiB -> %ld KiB, server settled: %s\n", threads_before, threads_after,
              rss_before, rss_after, settled ? "yes" : "no");

  // Allocator caches and the thread-local buffers of the pool, not growth per call.
  const bool memory_back = cfg.max_rss_growth_kb == 0 || rss_after <= rss_before + cfg.max_rss_growth_kb;
  const bool ok = out.wrong == 0 && out.unexpected == 0 && out.right > 0 && settled &&
                  threads_after == threads_before && memory_back;
  if (!ok) std::printf("soak: FAILED\n");
  return ok ? 0 : 1;
}
