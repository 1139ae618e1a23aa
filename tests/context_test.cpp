// The call context, metadata and interceptors (issue 16, point 4): what a handler learns about its
// call, the metadata a caller attaches and its limits, and interceptors on both sides that refuse
// calls and see every outcome, over every transport.
#include <sys/socket.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "support.hpp"

namespace context_test {

using namespace std::chrono_literals;

namespace {

// What a handler saw of its call.
struct seen {
  std::string peer, method, authorization;
  bool has_deadline = false, has_missing = false;
  std::uint64_t connection = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct Kv {
  std::mutex mutex;
  std::vector<seen> calls;
  std::atomic<int> runs{0};
  test::event release;

  std::string get(const std::string& key, const geerpc::call_context& ctx) {
    seen s;
    s.peer = ctx.peer();
    s.method = ctx.method();
    s.authorization = ctx.metadata("authorization").value_or("(none)");
    s.has_deadline = ctx.deadline().has_value();
    s.has_missing = ctx.metadata("missing").has_value();
    s.connection = ctx.connection_id();
    ctx.for_each_metadata([&](std::string_view k, std::string_view v) { s.metadata.emplace_back(k, v); });
    std::lock_guard lock(mutex);
    calls.push_back(std::move(s));
    ++runs;
    return "value of " + key;
  }
  // Both extras, in both orders.
  int stop_then_context(int a, std::stop_token stop, const geerpc::call_context& ctx) {
    ++runs;
    return stop.stop_possible() && ctx.method() == "Kv.StopThenContext" ? a + 1 : -1;
  }
  int context_then_stop(int a, const geerpc::call_context& ctx, std::stop_token stop) {
    ++runs;
    return stop.stop_possible() && ctx.method() == "Kv.ContextThenStop" ? a + 2 : -1;
  }
  int count() { return ++runs; }
  int fail() {
    ++runs;
    throw std::runtime_error("kv: failed");
  }
  // Returns when its stop_token fires.
  int wait(std::stop_token stop) {
    ++runs;
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lock(m);
    cv.wait_for(lock, stop, 10s, [] { return false; });
    return 0;
  }
  int hold() {
    ++runs;
    release.wait();
    return 1;
  }
};

using KvApi = geerpc::service<"Kv",                                                       //
                              geerpc::method<"Get", &Kv::get>,                            //
                              geerpc::method<"StopThenContext", &Kv::stop_then_context>,  //
                              geerpc::method<"ContextThenStop", &Kv::context_then_stop>,  //
                              geerpc::method<"Count", &Kv::count>,                        //
                              geerpc::method<"Fail", &Kv::fail>,                          //
                              geerpc::method<"Wait", &Kv::wait>,                          //
                              geerpc::method<"Hold", &Kv::hold>>;

static_assert(KvApi::fn<"Get">::arity == 1);  // the context is the server's, not an argument
static_assert(KvApi::fn<"StopThenContext">::arity == 1 && KvApi::fn<"ContextThenStop">::arity == 1);

// The address a client's socket has: what the server sees as its peer.
std::string local_address_of(int fd) {
  sockaddr_storage address{};
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  return geerpc::net::endpoint_text(address, size);
}

// Records every `after` a server interceptor sees.
struct outcome_log {
  struct entry {
    std::string method;
    std::error_code error;
    std::string message;
    std::chrono::nanoseconds duration;
  };
  std::mutex mutex;
  std::vector<entry> entries;
  test::counter count;

  void add(const geerpc::call_context& ctx, const geerpc::call_result& r) {
    {
      std::lock_guard lock(mutex);
      entries.push_back({std::string(ctx.method()), r.error, std::string(r.message), r.duration});
    }
    count.add();
  }
  // The first entry of `method` that failed (or succeeded) as said.
  std::optional<entry> find(std::string_view method, bool failed = true) {
    std::lock_guard lock(mutex);
    for (const auto& e : entries)
      if (e.method == method && static_cast<bool>(e.error) == failed) return e;
    return std::nullopt;
  }
};

}  // namespace

TEMPLATE_TEST_CASE("a handler sees its call's peer, method, deadline, connection and metadata", "[context]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<TestType>(address);
  auto other = geerpc::dial<TestType>(address);

  const auto ctx = geerpc::with_timeout(5s)
                       .with_metadata("authorization", "Bearer abc")
                       .with_metadata("trace-id", "1")
                       .with_metadata("empty", "")
                       .with_metadata("binary", std::string("a\0b\xff", 4))
                       .with_metadata("trace-id", "2");  // replaces the first
  CHECK(client.template call<std::string>(ctx, "Kv.Get", std::string("k")) == "value of k");
  CHECK(client.template call<std::string>("Kv.Get", std::string("k2")) == "value of k2");
  CHECK(other.template call<std::string>("Kv.Get", std::string("k3")) == "value of k3");
  CHECK(client.template call<int>("Kv.StopThenContext", 1) == 2);
  CHECK(client.template call<int>(geerpc::with_metadata("x", "y"), "Kv.ContextThenStop", 1) == 3);

  std::lock_guard lock(kv.mutex);
  REQUIRE(kv.calls.size() == 3);
  const seen& first = kv.calls[0];
  CHECK(first.method == "Kv.Get");
  CHECK(first.peer.rfind("127.0.0.1:", 0) == 0);
  CHECK(first.peer != address);  // the client's end, not the server's
  CHECK(first.authorization == "Bearer abc");
  CHECK(first.has_deadline);
  CHECK_FALSE(first.has_missing);
  CHECK(first.metadata ==
        std::vector<std::pair<std::string, std::string>>{
            {"authorization", "Bearer abc"}, {"trace-id", "2"}, {"empty", ""}, {"binary", std::string("a\0b\xff", 4)}});
  const seen& second = kv.calls[1];
  CHECK(second.authorization == "(none)");
  CHECK_FALSE(second.has_deadline);
  CHECK(second.metadata.empty());
  CHECK(second.connection == first.connection);  // one client, one connection
  CHECK(second.peer == first.peer);
  CHECK(kv.calls[2].connection != first.connection);
  CHECK(kv.calls[2].peer != first.peer);
}

TEST_CASE("the peer a handler sees is the client's own address", "[context]") {
  // Checked against the client's socket, through a raw connection the test controls.
  Kv kv;
  geerpc::server server;
  server.add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  test::raw_peer peer(address);
  peer.send_hello();
  REQUIRE(peer.read_hello_reply());
  peer.send(test::request_frame(1, "Kv.Get", std::string("k")));
  const auto reply = peer.read_frame();
  REQUIRE(reply);
  CHECK(reply->header.status == 0);
  std::lock_guard lock(kv.mutex);
  REQUIRE(kv.calls.size() == 1);
  CHECK(kv.calls[0].peer == local_address_of(peer.fd()));
}

TEMPLATE_TEST_CASE("metadata the client cannot send fails the call before anything is sent", "[context]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));
  for (const std::string& key : {std::string(), std::string("with space"), std::string(256, 'k'),
                                 std::string("tab\tkey"), std::string("\x7f")}) {
    auto r = client.template try_call<int>(geerpc::with_metadata(key, "v"), "Kv.Count");
    CHECK(r.code() == geerpc::errc::invalid_argument);
    CHECK(r.message().find("metadata key") != std::string::npos);
  }
  auto big = client.template try_call<int>(geerpc::with_metadata("k", std::string(65536, 'v')), "Kv.Count");
  CHECK(big.code() == geerpc::errc::invalid_argument);
  CHECK(big.message() == "rpc client: metadata value of \"k\" has 65536 bytes, more than 65535");
  CHECK(kv.runs == 0);
  // The longest key and value the format holds go through (under a server limit that allows them).
  CHECK(client.template try_call<int>(geerpc::with_metadata(std::string(255, 'k'), "v"), "Kv.Count").value() == 1);
}

TEMPLATE_TEST_CASE("metadata over the server's limit is refused with bad_request, and the connection serves on",
                   "[context]", GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::server_options opts;
  opts.limits.max_metadata_bytes = 64;
  geerpc::basic_server<TestType> server(opts);
  server.template add<KvApi>(kv);
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));
  // 4 (size) + 1 (version) + 1 + 1 + 2 + n: 64 bytes exactly at n = 55.
  CHECK(client.template try_call<int>(geerpc::with_metadata("k", std::string(55, 'v')), "Kv.Count").value() == 1);
  auto over = client.template try_call<int>(geerpc::with_metadata("k", std::string(56, 'v')), "Kv.Count");
  CHECK(over.code() == geerpc::errc::bad_request);
  CHECK(over.message() == "rpc server: request metadata of 65 bytes exceeds the limit of 64");
  CHECK(kv.runs == 1);
  CHECK(client.template call<int>("Kv.Count") == 2);
}

namespace {
// A request frame with flags 0x02 and `block` (everything after the size field) as its metadata.
std::vector<std::byte> request_with_block(std::uint64_t seq, std::string_view method,
                                          const std::vector<std::byte>& block, std::uint32_t claimed_size) {
  std::vector<std::byte> out;
  const std::size_t start = geerpc::wire::begin_frame(
      out, {geerpc::wire::frame_kind::request, geerpc::wire::request_flag::metadata, seq, 0}, method);
  for (int i = 0; i < 4; ++i) out.push_back(std::byte{static_cast<std::uint8_t>(claimed_size >> (8 * i))});
  out.insert(out.end(), block.begin(), block.end());
  geerpc::wire::finish_frame(out, start);
  return out;
}
std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(std::byte{static_cast<std::uint8_t>(v)});
  return out;
}
}  // namespace

TEST_CASE("a malformed metadata block is a bad_request: one that overruns its frame closes the connection",
          "[context][hostile]") {
  Kv kv;
  geerpc::server server;
  server.add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  test::raw_peer peer(address);
  peer.send_hello();
  REQUIRE(peer.read_hello_reply());

  const std::vector<std::pair<std::vector<std::byte>, std::string>> bad = {
      {bytes_of({}), "rpc server: request metadata without a version"},
      {bytes_of({2}), "rpc server: request metadata of an unknown version"},
      {bytes_of({1, 0, 0, 0}), "rpc server: request metadata key empty or not printable ASCII"},
      {bytes_of({1, 1, ' ', 0, 0}), "rpc server: request metadata key empty or not printable ASCII"},
      {bytes_of({1, 3, 'a', 'b'}), "rpc server: request metadata entry exceeds its block"},
      {bytes_of({1, 1, 'a', 5, 0, 'x'}), "rpc server: request metadata value exceeds its block"},
  };
  std::uint64_t seq = 1;
  for (const auto& [block, message] : bad) {
    peer.send(request_with_block(seq, "Kv.Count", block, static_cast<std::uint32_t>(block.size())));
    const auto reply = peer.read_frame();
    REQUIRE(reply);
    CHECK(reply->header.seq == seq);
    CHECK(reply->header.status == static_cast<std::uint8_t>(geerpc::errc::bad_request));
    CHECK(reply->text == message);
    ++seq;
  }
  // A well-formed block goes through, and the handler reads it.
  peer.send(request_with_block(seq, "Kv.Get", bytes_of({1,   13,  'a', 'u', 't', 'h', 'o', 'r', 'i', 'z', 'a',
                                                        't', 'i', 'o', 'n', 2,   0,   'o', 'k', 1,   'k'}),
                               19));  // the block's 19 bytes, then the argument: the string "k"
  const auto good = peer.read_frame();
  REQUIRE(good);
  CHECK(good->header.status == 0);
  CHECK(kv.runs == 1);
  {
    std::lock_guard lock(kv.mutex);
    CHECK(kv.calls.at(0).authorization == "ok");
  }
  // A size field claiming more than the frame holds breaks the framing: the server hangs up.
  peer.send(request_with_block(seq + 1, "Kv.Count", bytes_of({1}), 2));
  CHECK(peer.closed_by_peer());
  CHECK(kv.runs == 1);
}

TEMPLATE_TEST_CASE("a server interceptor refuses calls with an error of its choosing, before the handler runs",
                   "[context][interceptor]", GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  std::atomic<int> befores{0};
  server.use({.before = [&](const geerpc::call_context& ctx) -> std::optional<geerpc::error> {
    ++befores;
    const auto token = ctx.metadata("authorization");
    if (!token) return geerpc::error{geerpc::errc::unauthenticated, "kv: no token"};
    if (*token == "reader" && ctx.method() != "Kv.Get")
      return geerpc::error{geerpc::errc::permission_denied, "kv: readers may only get"};
    if (*token == "posix") return geerpc::error{std::make_error_code(std::errc::permission_denied), ""};
    if (*token == "thrower") throw std::runtime_error("kv: interceptor threw");
    return std::nullopt;
  }});
  auto client = geerpc::dial<TestType>(server.listen("127.0.0.1:0"));

  auto none = client.template try_call<int>("Kv.Count");
  CHECK(none.code() == geerpc::errc::unauthenticated);
  CHECK(none.message() == "kv: no token");
  auto reader = client.template try_call<int>(geerpc::with_metadata("authorization", "reader"), "Kv.Count");
  CHECK(reader.code() == geerpc::errc::permission_denied);
  CHECK(reader.message() == "kv: readers may only get");
  auto posix = client.template try_call<int>(geerpc::with_metadata("authorization", "posix"), "Kv.Count");
  CHECK(posix.code() == geerpc::errc::remote_error);  // not geerpc's category: travels as remote_error
  CHECK(posix.message() == std::make_error_code(std::errc::permission_denied).message());
  auto thrower = client.template try_call<int>(geerpc::with_metadata("authorization", "thrower"), "Kv.Count");
  CHECK(thrower.code() == geerpc::errc::remote_error);
  CHECK(thrower.message() == "kv: interceptor threw");
  CHECK(kv.runs == 0);

  CHECK(client.template call<std::string>(geerpc::with_metadata("authorization", "reader"), "Kv.Get",
                                          std::string("k")) == "value of k");
  CHECK(client.template call<int>(geerpc::with_metadata("authorization", "admin"), "Kv.Count") == 2);
  CHECK(befores == 6);
}

TEMPLATE_TEST_CASE("a server interceptor's after sees every call's outcome", "[context][interceptor]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::server_options opts;
  geerpc::basic_server<TestType> server(opts);
  server.template add<KvApi>(kv);
  outcome_log log;
  test::counter second_afters;  // runs after the first interceptor's: waited for on its own
  server.use({.after = [&](const geerpc::call_context& ctx, const geerpc::call_result& r) { log.add(ctx, r); }});
  server.use({.after = [&](const geerpc::call_context&, const geerpc::call_result&) {
    second_afters.add();
    throw std::runtime_error("dropped");  // an after that throws changes nothing
  }});
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<TestType>(address, {.timeouts = {.handle = 200ms}});

  CHECK(client.template call<int>("Kv.Count") == 1);
  CHECK(client.template try_call<int>("Kv.Fail").code() == geerpc::errc::remote_error);
  CHECK(client.template try_call<int>("Kv.Nope").code() == geerpc::errc::unknown_method);
  CHECK(client.template try_call<std::string>("Kv.Count").code() == geerpc::errc::type_mismatch);
  CHECK(client.template try_call<int>("Kv.Wait").code() == geerpc::errc::handle_timeout);
  REQUIRE(log.count.wait_for_at_least(5, 5s));

  const auto ok = log.find("Kv.Count", false);
  REQUIRE(ok);
  CHECK_FALSE(ok->error);
  CHECK(ok->message.empty());
  CHECK(ok->duration > 0ns);
  const auto failed = log.find("Kv.Fail");
  REQUIRE(failed);
  CHECK(failed->error == geerpc::errc::remote_error);
  CHECK(failed->message == "kv: failed");
  const auto unknown = log.find("Kv.Nope");
  REQUIRE(unknown);
  CHECK(unknown->error == geerpc::errc::unknown_method);
  const auto timed_out = log.find("Kv.Wait");
  REQUIRE(timed_out);
  CHECK(timed_out->error == geerpc::errc::handle_timeout);
  CHECK(timed_out->duration >= 200ms);  // from arrival to the answer, which the timeout gave
  {
    std::lock_guard lock(log.mutex);
    CHECK(log.entries.size() == 5);
    std::size_t mismatches = 0;
    for (const auto& e : log.entries) mismatches += e.error == geerpc::errc::type_mismatch ? 1 : 0;
    CHECK(mismatches == 1);
  }
  CHECK(second_afters.wait_for_at_least(5, 5s));
  CHECK(second_afters.value() == 5);
}

TEST_CASE("a server interceptor sees cancelled calls and calls whose connection closed before they ran",
          "[context][interceptor]") {
  Kv kv;
  // One handler thread: a call queued behind a held one has not run when its connection closes.
  geerpc::server server({.threads = {.handlers = 1, .max_handlers = 1}});
  server.add<KvApi>(kv);
  outcome_log log;
  server.use({.after = [&](const geerpc::call_context& ctx, const geerpc::call_result& r) { log.add(ctx, r); }});
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));

  auto waiting = client.async_call<int>("Kv.Wait");
  REQUIRE(test::eventually([&] { return kv.runs == 1; }));
  waiting.cancel();
  CHECK(waiting.try_get().code() == geerpc::errc::canceled);
  REQUIRE(log.count.wait_for_at_least(1, 5s));
  CHECK(log.find("Kv.Wait")->error == geerpc::errc::canceled);
  CHECK(log.find("Kv.Wait")->message == "rpc server: request canceled by the client");

  auto held = client.async_call<int>("Kv.Hold");
  REQUIRE(test::eventually([&] { return kv.runs == 2; }));
  auto queued = client.async_call<int>("Kv.Count");
  REQUIRE(test::eventually([&] { return server.inflight() == 2; }));  // both read by the server
  client.close();
  REQUIRE(test::eventually([&] { return server.connection_count() == 0; }));
  kv.release.set();
  REQUIRE(log.count.wait_for_at_least(3, 5s));
  const auto never_ran = log.find("Kv.Count");
  REQUIRE(never_ran);
  CHECK(never_ran->error == geerpc::errc::connection_closed);
  CHECK(never_ran->message == "rpc server: the connection closed before the call was answered");
  CHECK(kv.runs == 2);
}

TEMPLATE_TEST_CASE("client interceptors add metadata and see each call's outcome", "[context][interceptor]",
                   GEERPC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  std::mutex mutex;
  std::vector<std::pair<std::string, std::error_code>> seen_outcomes;
  geerpc::options opts;
  opts.interceptors.push_back(
      {.before =
           [](geerpc::client_call& call) { call.ctx = call.ctx.with_metadata("authorization", "from interceptor"); },
       .after =
           [&](const geerpc::client_call& call, const geerpc::call_result& r) {
             std::lock_guard lock(mutex);
             seen_outcomes.emplace_back(std::string(call.method), r.error);
           }});
  auto client = geerpc::dial<TestType>(address, opts);
  CHECK(client.template call<std::string>("Kv.Get", std::string("k")) == "value of k");
  CHECK(client.template try_call<int>("Kv.Fail").code() == geerpc::errc::remote_error);
  CHECK(client.template try_call<int>("Kv.Nope").code() == geerpc::errc::unknown_method);
  {
    std::lock_guard lock(kv.mutex);
    REQUIRE(kv.calls.size() == 1);
    CHECK(kv.calls[0].authorization == "from interceptor");
  }
  std::lock_guard lock(mutex);
  CHECK(seen_outcomes ==
        std::vector<std::pair<std::string, std::error_code>>{
            {"Kv.Get", {}}, {"Kv.Fail", geerpc::errc::remote_error}, {"Kv.Nope", geerpc::errc::unknown_method}});
}

TEMPLATE_TEST_CASE("a client interceptor sees an async call's outcome before its future is ready",
                   "[context][interceptor]", GEERPC_ASYNC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  std::atomic<int> afters{0};
  std::atomic<int> last_error{-1};
  geerpc::options opts;
  opts.interceptors.push_back({.after = [&](const geerpc::client_call& call, const geerpc::call_result& r) {
    if (call.method == "Kv.Count" || call.method == "Kv.Fail") last_error = r.error.value();
    ++afters;
  }});
  auto client = geerpc::dial<TestType>(address, opts);
  auto ok = client.template async_call<int>("Kv.Count");
  ok.wait();
  CHECK(afters == 1);
  CHECK(last_error == 0);
  CHECK(ok.get() == 1);
  auto failed = client.template async_call<int>("Kv.Fail");
  failed.wait();
  CHECK(afters == 2);
  CHECK(last_error == static_cast<int>(geerpc::errc::remote_error));
  // Refused before it was sent: seen too.
  auto refused = client.template async_call<int>(geerpc::with_metadata("", "v"), "Kv.Count");
  CHECK(afters == 3);
  CHECK(refused.try_get().code() == geerpc::errc::invalid_argument);
}

TEMPLATE_TEST_CASE("a client interceptor's after may start another call of the same client, even once it is closed",
                   "[context][interceptor]", GEERPC_ASYNC_TRANSPORTS) {
  Kv kv;
  geerpc::basic_server<TestType> server;
  server.template add<KvApi>(kv);
  const std::string address = server.listen("127.0.0.1:0");
  geerpc::basic_client<TestType>* self = nullptr;
  std::mutex mutex;
  std::vector<test::future<int, TestType>> again;
  test::counter started;
  geerpc::options opts;
  opts.interceptors.push_back({.after = [&](const geerpc::client_call& call, const geerpc::call_result&) {
    if (call.method != "Kv.Count") return;
    auto next = self->template async_call<int>("Kv.Fail");
    {
      std::lock_guard lock(mutex);
      again.push_back(std::move(next));
    }
    started.add();
  }});
  auto client = geerpc::dial<TestType>(address, opts);
  self = &client;
  auto first = client.template async_call<int>("Kv.Count");  // its after runs on the receiving thread
  CHECK(first.get() == 1);
  REQUIRE(started.wait_for_at_least(1));
  {
    std::lock_guard lock(mutex);
    CHECK(again[0].try_get().code() == geerpc::errc::remote_error);
  }
  client.close();
  // Completed on this thread, by the closed connection, whose lock is not held meanwhile.
  auto second = client.template async_call<int>("Kv.Count");
  CHECK(second.try_get().code() == geerpc::errc::connection_closed);
  REQUIRE(started.wait_for_at_least(2));
  std::lock_guard lock(mutex);
  CHECK(again[1].try_get().code() == geerpc::errc::connection_closed);
}

}  // namespace context_test
