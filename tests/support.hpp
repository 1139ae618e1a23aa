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
#include <thread>
#include <vector>

#include "counting_allocator.hpp"

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

// A loopback listener that answers nothing by itself: the kernel completes TCP connects from its
// backlog, and a test accepts them (or never does) when it likes.
class listener {
 public:
  listener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      throw std::runtime_error("listener: cannot listen on loopback");
    port_ = ntohs(address.sin_port);
  }
  ~listener() { ::close(fd_); }
  listener(const listener&) = delete;
  listener& operator=(const listener&) = delete;
  int fd() const { return fd_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
};

// A peer that speaks raw bytes, for tests below the client API: a client connected to a server,
// or a server's end of a connection a test accepted.
class raw_peer {
 public:
  struct accepted_t {};
  static constexpr accepted_t accepted{};
  raw_peer(accepted_t, int fd) : fd_(fd) {
    if (fd_ < 0) throw std::runtime_error("accept failed");
  }

  explicit raw_peer(const std::string& address) {
    std::string why;
    auto endpoint = geerpc::net::resolve(address, why);
    if (!endpoint) throw std::runtime_error(why);
    fd_ = ::socket(endpoint->address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&endpoint->address), endpoint->size) != 0)
      throw std::runtime_error("connect failed");
  }
  ~raw_peer() { ::close(fd_); }
  raw_peer(const raw_peer&) = delete;
  raw_peer& operator=(const raw_peer&) = delete;

  int fd() const { return fd_; }

  void send(std::span<const std::byte> bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<std::size_t>(n);
    }
  }

  // Reads exactly `size` bytes; nullopt on EOF, error or after `limit`.
  std::optional<std::vector<std::byte>> read(std::size_t size, std::chrono::milliseconds limit = 5s) {
    std::vector<std::byte> out(size);
    std::size_t have = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (have < size) {
      pollfd p{fd_, POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      const ssize_t n = ::recv(fd_, out.data() + have, size - have, 0);
      if (n <= 0) return std::nullopt;
      have += static_cast<std::size_t>(n);
    }
    return out;
  }

  // Everything the server sends until it closes the connection; nullopt if it has not closed
  // within `limit` (or resets it).
  std::optional<std::string> read_all(std::chrono::milliseconds limit = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string out;
    char buffer[4096];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return out;
      if (n < 0) return std::nullopt;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }
  void send(std::string_view text) { send(std::as_bytes(std::span(text.data(), text.size()))); }

  // True when the server closed the connection (EOF or reset) within `limit`.
  bool closed_by_peer(std::chrono::milliseconds limit = 5s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::byte sink[4096];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      if (::recv(fd_, sink, sizeof sink, 0) <= 0) return true;
    }
  }

  void send_hello(std::chrono::microseconds handle_timeout = 0us) {
    std::array<std::byte, geerpc::wire::hello_size> hello{};
    geerpc::wire::encode_hello(
        {geerpc::wire::protocol_version, geerpc::binary_codec::id, static_cast<std::uint64_t>(handle_timeout.count()),
         geerpc::wire::default_max_frame_size},
        hello);
    send(hello);
  }

  // Reads a handshake reply; returns it with its reason.
  std::optional<geerpc::wire::hello_reply> read_hello_reply() {
    auto header = read(geerpc::wire::hello_reply_header_size);
    if (!header) return std::nullopt;
    geerpc::wire::hello_reply reply;
    std::size_t reason_size = 0;
    if (geerpc::wire::parse_hello_reply_header(std::span<const std::byte, 12>(header->data(), 12), reply, reason_size))
      return std::nullopt;
    auto reason = read(reason_size);
    if (!reason) return std::nullopt;
    reply.reason.assign(reinterpret_cast<const char*>(reason->data()), reason->size());
    return reply;
  }

  struct frame {
    geerpc::wire::frame_header header;
    std::string text;
    std::vector<std::byte> body;
  };

  std::optional<frame> read_frame(std::chrono::milliseconds limit = 5s) {
    auto prefix = read(geerpc::wire::length_prefix_size, limit);
    if (!prefix) return std::nullopt;
    const std::uint32_t length = geerpc::detail::load_le<std::uint32_t>(prefix->data());
    auto rest = read(length, limit);
    if (!rest) return std::nullopt;
    prefix->insert(prefix->end(), rest->begin(), rest->end());
    geerpc::wire::frame_view view;
    if (geerpc::wire::parse_frame(*prefix, view) != nullptr) return std::nullopt;
    return frame{view.header, std::string(view.text), std::vector<std::byte>(view.body.begin(), view.body.end())};
  }

 private:
  int fd_ = -1;
};

// The body of `GET <path>` on a server's RPC port (the debug page, its JSON); throws on anything
// but a 200 answer within `limit`.
inline std::string http_get(const std::string& address, const std::string& path, std::chrono::milliseconds limit = 5s) {
  raw_peer peer(address);
  peer.send("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
  const auto response = peer.read_all(limit);
  if (!response) throw std::runtime_error("GET " + path + ": no whole answer");
  if (!response->starts_with("HTTP/1.0 200 ")) throw std::runtime_error("GET " + path + ": " + response->substr(0, 80));
  const auto at = response->find("\r\n\r\n");
  return at == std::string::npos ? std::string() : response->substr(at + 4);
}

// The server's end of the next connection to `l`; null if no client connects within `limit`.
inline std::unique_ptr<raw_peer> accept_raw(listener& l, std::chrono::milliseconds limit = 5s) {
  pollfd p{l.fd(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(limit.count())) <= 0) return nullptr;
  const int fd = ::accept4(l.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::make_unique<raw_peer>(raw_peer::accepted, fd);
}

// The server's end of the next connection to `l`, once its hello has been read and accepted with
// `max_frame_size`; null if no client connects within `limit` or the hello does not come.
inline std::unique_ptr<raw_peer> accept_greeted(listener& l, std::chrono::milliseconds limit = 5s,
                                                std::uint32_t max_frame_size = geerpc::wire::default_max_frame_size) {
  auto peer = accept_raw(l, limit);
  if (!peer || !peer->read(geerpc::wire::hello_size, limit)) return nullptr;
  std::vector<std::byte> reply;
  geerpc::wire::encode_hello_reply({true, max_frame_size, {}}, reply);
  try {
    peer->send(reply);  // throws if the client has gone; this often runs on a thread of the test's
  } catch (const std::exception&) {
    return nullptr;
  }
  return peer;
}

// A complete request frame.
template <class A>
std::vector<std::byte> request_frame(std::uint64_t seq, std::string_view method, const A& argument,
                                     std::uint64_t budget_us = 0) {
  std::vector<std::byte> out;
  const std::size_t start =
      geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::request, 0, seq, budget_us}, method);
  geerpc::binary_codec::encode(argument, out);
  geerpc::wire::finish_frame(out, start);
  return out;
}

// A successful response frame.
template <class R>
std::vector<std::byte> response_frame(std::uint64_t seq, const R& result) {
  std::vector<std::byte> out;
  const std::size_t start = geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::response, 0, seq, 0}, "");
  geerpc::binary_codec::encode(result, out);
  geerpc::wire::finish_frame(out, start);
  return out;
}

// A cancel frame for request `seq`.
inline std::vector<std::byte> cancel_frame(std::uint64_t seq) {
  std::vector<std::byte> out;
  geerpc::wire::finish_frame(out, geerpc::wire::begin_frame(out, {geerpc::wire::frame_kind::cancel, 0, seq, 0}, ""));
  return out;
}

template <class T>
T decode_body(const std::vector<std::byte>& body) {
  T value{};
  if (!geerpc::binary_codec::decode(body, value)) throw std::runtime_error("body does not decode");
  return value;
}

}  // namespace test
