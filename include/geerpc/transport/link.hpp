// geerpc: what the front classes (basic_client, call_future, basic_server) ask of a transport's
// engines: a handful of operations, declared here for every transport and defined with the engines
// in transport/engines.hpp. The front classes know an engine only as an incomplete type, through
// these, so a program can compile the engines once instead of in every translation unit that makes
// a call or serves one:
//
//   - header-only (the default): every translation unit that uses a transport compiles its engines;
//     nothing else to do.
//   - GEERPC_SEPARATE_COMPILATION defined for the whole program (CMake: link geerpc::compiled):
//     the headers stop here, and one source file includes <geerpc/implementation.hpp>, which
//     compiles the engines of the three standard transports (threaded, basic_threaded<tuning::none>,
//     blocking) once. A translation unit that uses another transport (its own tuning policy)
//     includes <geerpc/transport/engines.hpp> too.
//
// README.md ("Build time") gives the figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../client/call.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../detail/chrono.hpp"
#include "../error.hpp"
#include "../options.hpp"
#include "fwd.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

struct server_context;  // server/context.hpp: basic_server's, which a program that only calls never sees

// What runs once an asynchronous call is complete (a callback's holder, a suspended coroutine):
// on the thread that completed it, after the call is done, with no lock held. It may destroy the
// call's state.
struct continuation {
  void (*run)(void* context) noexcept = nullptr;
  void* context = nullptr;
};

// An asynchronous call as its future sees it (the threaded transport's is async_call, in
// transport/threaded/client.hpp). Completed exactly once, by whoever completes the call.
class async_state {
 public:
  virtual ~async_state() = default;
  async_state(const async_state&) = delete;
  async_state& operator=(const async_state&) = delete;

  // Whether the call has completed; waiting for it, or for it until `deadline` (false: still pending).
  virtual bool done() const = 0;
  virtual void wait() const = 0;
  virtual bool wait_until(std::chrono::steady_clock::time_point deadline) const = 0;
  // Completes the call with errc::canceled if nothing has completed it yet, and tells the server.
  virtual void cancel() = 0;
  // After completion: disarms the call's deadline and stop callback, so that its memory can go.
  virtual void settle() = 0;
  // After completion: how the call ended, and a successful reply's body.
  virtual const call_outcome& final_outcome() const = 0;
  virtual std::span<const std::byte> body() const = 0;
  // Keeps `next` to run when the call completes (one at most); false when it has completed already,
  // and the caller runs it.
  virtual bool then(continuation next) = 0;
  // Drops the continuation, if it has not run: its owner is going (a coroutine destroyed while
  // suspended on the call), and the call is about to be cancelled.
  virtual void forget() noexcept = 0;

 protected:
  async_state() = default;
};

// A call that ended before it was sent (the client refused it, or had no connection).
class finished_call final : public async_state {
 public:
  explicit finished_call(call_outcome outcome) : outcome_(std::move(outcome)) {}
  bool done() const override { return true; }
  void wait() const override {}
  bool wait_until(std::chrono::steady_clock::time_point) const override { return true; }
  void cancel() override {}
  void settle() override {}
  const call_outcome& final_outcome() const override { return outcome_; }
  std::span<const std::byte> body() const override { return {}; }
  bool then(continuation) override { return false; }
  void forget() noexcept override {}

 private:
  call_outcome outcome_;
};

// A client connection's engine, as basic_client and call_future use it.
template <class Transport>
struct client_link {
  using engine = typename Transport::client_engine;

  // Resolves, connects and handshakes within opts.timeouts.connect; then the engine serves calls.
  static result<std::shared_ptr<engine>> open(std::string_view address, const options& opts, std::uint8_t codec_id);
  // A synchronous call: sends `frame` (a request frame whose seq and budget the engine fills in)
  // and waits for the reply, whose body goes to `reply`, or for the failure.
  static call_outcome call(engine& e, const context& ctx, std::span<std::byte> frame, const reply_sink& reply);
  // An asynchronous call (Transport::supports_async): on the wire when this returns.
  // `hook`, if set, runs when the call completes.
  static std::unique_ptr<async_state> start(const std::shared_ptr<engine>& e, const context& ctx,
                                            std::span<std::byte> frame, completion_hook hook = {});
  static std::uint32_t server_max_frame_size(const engine& e) noexcept;
  static void close(engine& e);
  static bool is_open(const engine& e);
  // Whether the calling thread is the engine's own (its receiving thread, where completions run).
  static bool on_own_thread(const engine& e);
};

// A server's engine, as basic_server uses it.
template <class Transport>
struct server_link {
  using engine = typename Transport::server_engine;

  static void destroy(engine* e) noexcept;
  struct deleter {
    void operator()(engine* e) const noexcept { server_link::destroy(e); }
  };
  using handle = std::unique_ptr<engine, deleter>;

  // Binds `address`, starts serving and sets `bound` to the address to dial.
  static handle listen(server_context& context, std::string_view address, std::string& bound);
  static void stop(engine& e);
  // Graceful: stops accepting, tells every client to send no more (goaway), lets calls in flight
  // run until `drain_deadline`, aborts those left, then stops.
  static void shutdown(engine& e, server_context& context, std::chrono::steady_clock::time_point drain_deadline);
  static std::size_t connection_count(const engine& e);
  // The open connections of each reactor (one number where the transport has no reactors).
  static std::vector<std::size_t> reactor_connections(const engine& e);
  // Whether the calling thread is one of the engine's (a handler's): its stop() only begins there.
  static bool on_own_thread(const engine& e);
  // The threads serving now, and how often the system refused to start one (0 where the
  // transport does not say).
  static std::size_t thread_count(const engine& e);
  static std::size_t thread_start_failures(const engine& e);
};

#if defined(GEERPC_SEPARATE_COMPILATION) && !defined(GEERPC_IMPLEMENTATION)
// Compiled once, by the source file that includes <geerpc/implementation.hpp>.
extern template struct client_link<threaded>;
extern template struct client_link<basic_threaded<tuning::none>>;
extern template struct client_link<blocking>;
extern template struct server_link<threaded>;
extern template struct server_link<basic_threaded<tuning::none>>;
extern template struct server_link<blocking>;
#endif

}  // namespace detail
GEERPC_END_NAMESPACE
