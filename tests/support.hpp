// Helpers shared by the tests: a test service, a raw-bytes peer for protocol-level tests, and
// ways to wait for events without sleeping and hoping.
#pragma once

#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <geerpc/geerpc.hpp>
#include <geerpc/transport/engines.hpp>  // the tests reach into engines; with GEERPC_SEPARATE_COMPILATION too
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "counting_allocator.hpp"
#include "raw_peer.hpp"

// GEERPC_TEST_TSAN: this build runs under ThreadSanitizer, as GCC (__SANITIZE_THREAD__) or Clang
// (__has_feature) tells it.
#if defined(__SANITIZE_THREAD__)
#define GEERPC_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GEERPC_TEST_TSAN 1
#endif
#endif

namespace test {

// The number after `"key":` in the part of `json` from `from` on; -1 when there is none.
inline long long number_after(const std::string& json, std::string_view from, std::string_view key) {
  const auto start = json.find(from);
  if (start == std::string::npos) return -1;
  const auto at = json.find("\"" + std::string(key) + "\":", start);
  if (at == std::string::npos) return -1;
  return std::stoll(json.substr(at + key.size() + 3));
}

using namespace std::chrono_literals;

// The threaded transport with every heuristic off: the plain core, which the behavioural tests
// run over too (tuning/none.hpp).
using plain_threaded = geerpc::basic_threaded<geerpc::tuning::none>;
// The blocking transport with every heuristic off: no spin, strict arrival order for the turn.
using plain_blocking = geerpc::basic_blocking<geerpc::tuning::none>;

template <class T, class Transport>
using future = geerpc::call_future<T, geerpc::binary_codec, Transport>;

}  // namespace test

// What the behavioural tests run over: every transport, and those that make async calls.
#define GEERPC_TRANSPORTS geerpc::blocking, geerpc::threaded, test::plain_threaded
#define GEERPC_ASYNC_TRANSPORTS geerpc::threaded, test::plain_threaded

namespace test {

struct Args {
  int num1;
  int num2;
};

// The binary codec without type fingerprints: what a client in another language that skips them
// sends (docs/protocol.md, 4.1). The server then finds a wrong type only by decoding.
struct unchecked_codec {
  static constexpr std::uint8_t id = geerpc::binary_codec::id;
  static constexpr const char* name = "binary, without fingerprints";
  template <class T>
  static void encode(const T& value, std::vector<std::byte>& out) {
    geerpc::binary_codec::encode(value, out);
  }
  template <class T>
  static geerpc::codec::decode_status decode(std::span<const std::byte> bytes, T& value) {
    return geerpc::binary_codec::decode(bytes, value);
  }
};

// A one-shot event a test can wait for with a bound (the bound only catches hangs).
class event {
 public:
  void set() {
    std::lock_guard lock(mutex_);
    set_ = true;
    changed_.notify_all();
  }
  bool wait(std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return set_; });
  }
  bool is_set() {
    std::lock_guard lock(mutex_);
    return set_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool set_ = false;
};

// Keeps the scheduler thread inside a callback until released, so that timers set meanwhile
// (with deadlines that pass meanwhile) are then run purely in the heap's order: no timing involved.
class hold_scheduler {
 public:
  explicit hold_scheduler(geerpc::detail::deadline_scheduler& scheduler) : scheduler_(scheduler) {
    scheduler_.schedule(timer_, geerpc::detail::deadline_scheduler::clock::now(), &hold, this);
    held_ = entered_.wait();
  }
  ~hold_scheduler() { release(); }
  bool held() const { return held_; }
  void release() {
    release_.set();
    scheduler_.cancel(timer_);  // waits for the callback to return
  }

 private:
  static void hold(void* context) {
    auto* self = static_cast<hold_scheduler*>(context);
    self->entered_.set();
    self->release_.wait();
  }
  geerpc::detail::deadline_scheduler& scheduler_;
  geerpc::detail::deadline_scheduler::timer timer_;
  event entered_, release_;
  bool held_ = false;
};

// Counts up and lets a test wait until the count reaches a value.
class counter {
 public:
  void add(int n = 1) {
    std::lock_guard lock(mutex_);
    value_ += n;
    changed_.notify_all();
  }
  int value() {
    std::lock_guard lock(mutex_);
    return value_;
  }
  bool wait_for_at_least(int target, std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return value_ >= target; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int value_ = 0;
};

struct Arith {
  counter started;     // handlers of wait_for_stop that began
  counter stops_seen;  // handlers that saw their stop_token fire
  counter finished;    // handlers of wait_for_stop / late that returned
  event release;       // lets blocked handlers go

  int sum(const Args& a) { return a.num1 + a.num2; }
  int fail(const Args&) { throw std::runtime_error("boom: handler failed"); }
  int throw_int(const Args&) { throw 42; }
  void nothing(const Args&) {}
  std::string echo(const std::string& text) { return text; }

  // Blocks until its stop_token fires (or a 10 s safety bound), and says which happened.
  int wait_for_stop(const Args& a, std::stop_token stop) {
    started.add();
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    const bool stopped = cv.wait_for(lock, stop, 10s, [] { return false; }), saw_stop = stop.stop_requested();
    (void)stopped;
    if (saw_stop) stops_seen.add();
    finished.add();
    return a.num1 + a.num2;
  }

  // Ignores its stop_token: blocks until the test releases it, then answers num1 * 1000.
  int late(const Args& a) {
    started.add();
    release.wait();
    finished.add();
    return a.num1 * 1000;
  }
};

using ArithApi =
    geerpc::service<"Arith",                                        //
                    geerpc::method<"Sum", &Arith::sum>,             //
                    geerpc::method<"Fail", &Arith::fail>,           //
                    geerpc::method<"ThrowInt", &Arith::throw_int>,  //
                    geerpc::method<"Nothing", &Arith::nothing>,     //
                    geerpc::method<"Echo", &Arith::echo>,           //
                    geerpc::method<"WaitForStop", &Arith::wait_for_stop>, geerpc::method<"Late", &Arith::late>>;

// GEERPC_TEST_IO_THREADS=N: the tests' threaded servers run N reactors where they leave
// threads.io_threads at its default (unset or 0: the default), so that the whole suite can run
// over several. The blocking transport ignores it.
inline geerpc::server_options with_test_io_threads(geerpc::server_options opts) {
  static const std::size_t forced = [] {
    const char* value = std::getenv("GEERPC_TEST_IO_THREADS");
    return value != nullptr ? static_cast<std::size_t>(std::strtoul(value, nullptr, 10)) : std::size_t{0};
  }();
  if (forced != 0 && opts.threads.io_threads == geerpc::server_options{}.threads.io_threads)
    opts.threads.io_threads = forced;
  return opts;
}

// For arith_server's `exact_options`: its io_threads as the test gave them, whatever the environment
// (a test of one pool's shape).
inline constexpr bool as_given = true;

// A server of the given transport (and codec, or codecs<...>) with Arith registered, listening on
// loopback; with GEERPC_TEST_IO_THREADS's reactors, unless `exact_options`.
template <class Transport, class Codec = geerpc::binary_codec>
struct arith_server {
  Arith arith;
  geerpc::basic_server<Transport, Codec> server;
  std::string address;

  explicit arith_server(geerpc::server_options opts = {}, const std::string& listen_on = "127.0.0.1:0",
                        bool exact_options = false)
      : server(exact_options ? opts : with_test_io_threads(opts)) {
    server.template add<ArithApi>(arith);
    address = server.listen(listen_on);
  }
};

// A fresh directory under /tmp for Unix socket files, removed with what is left in it.
class temp_dir {
 public:
  temp_dir() {
    char name[] = "/tmp/geerpc-test-XXXXXX";
    if (::mkdtemp(name) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = name;
  }
  ~temp_dir() {
    if (DIR* dir = ::opendir(path_.c_str())) {
      while (dirent* entry = ::readdir(dir))
        if (entry->d_name[0] != '.') ::unlink((path_ + "/" + entry->d_name).c_str());
      ::closedir(dir);
    }
    ::rmdir(path_.c_str());
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  const std::string& path() const { return path_; }
  // The address of a Unix socket named `name` in this directory.
  std::string socket(const std::string& name = "s.sock") const { return "unix@" + path_ + "/" + name; }

 private:
  std::string path_;
};

// Whether a file exists at `path` (without following a symbolic link).
inline bool file_exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Threads of this process, from /proc.
inline int thread_count() {
  int count = 0;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (dirent* entry = ::readdir(dir))
      if (entry->d_name[0] != '.') ++count;
    ::closedir(dir);
  }
  return count;
}

// The thread count to compare against later: sanitizer runtimes start a helper thread of their
// own with the first thread a program creates, so start (and join) one before counting.
inline int baseline_thread_count() {
  std::thread([] {}).join();
  return thread_count();
}

// Waits for a condition that has no event to wait on (a thread exiting, a counter in another
// object), checking often and giving up after `limit`.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Server options whose debug page (and what shares its policy) admits the peers `policy` admits,
// with a short handshake timeout for the HTTP peers of a test.
inline geerpc::server_options with_debug_page(geerpc::debug_page_policy policy) {
  geerpc::server_options opts;
  opts.timeouts.handshake = 2s;
  opts.observability.debug_page = std::move(policy);
  return opts;
}

}  // namespace test
