// Out of memory while a server accepts a connection: that connection is closed and counted
// (refused_connections()), the process lives on and the server keeps serving. Its own program,
// because it replaces the global operator new to make one chosen allocation fail: the one
// std::make_shared makes for the accepted connection's state, recognised by its size.
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using test::Args;

namespace {

// While armed, the next allocation of a size in [fail_from, fail_to] made by a thread other than
// the test's own throws std::bad_alloc, and disarms.
std::atomic<bool> armed{false};
std::atomic<std::size_t> fail_from{0}, fail_to{0};
thread_local bool exempt = false;

bool fails(std::size_t size) noexcept {
  if (!armed.load(std::memory_order_acquire) || exempt) return false;
  if (size < fail_from.load(std::memory_order_relaxed) || size > fail_to.load(std::memory_order_relaxed)) return false;
  return armed.exchange(false, std::memory_order_acq_rel);
}

void* allocate(std::size_t size, std::size_t alignment) {
  if (fails(size)) throw std::bad_alloc();
  if (size == 0) size = 1;
  void* p = alignment <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* allocate_or_null(std::size_t size, std::size_t alignment) noexcept {
  try {
    return allocate(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

// The size of std::make_shared<server_connection>'s one allocation: the object and its control
// block (two counts and a vtable pointer), rounded up to the object's alignment.
void arm_for_connection_state() {
  using connection = geerpc::detail::server_connection;
  fail_from.store(sizeof(connection), std::memory_order_relaxed);
  fail_to.store(sizeof(connection) + alignof(connection) + 32, std::memory_order_relaxed);
  armed.store(true, std::memory_order_release);
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size, alignof(std::max_align_t)); }
void* operator new[](std::size_t size) { return allocate(size, alignof(std::max_align_t)); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  return allocate(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return allocate(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
// The nothrow forms too (Catch2 uses them): left to the runtime, a sanitizer's own would pair its
// allocation with our delete.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return allocate_or_null(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return allocate_or_null(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return allocate_or_null(size, static_cast<std::size_t>(alignment));
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  return allocate_or_null(size, static_cast<std::size_t>(alignment));
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

TEMPLATE_TEST_CASE("no memory for an accepted connection: it is closed and counted, and the server serves on",
                   "[alloc_failure][limits]", GEERPC_TRANSPORTS) {
  exempt = true;  // the test's own allocations (the client's) never fail
  test::arith_server<TestType> s;
  REQUIRE(s.server.refused_connections() == 0);

  arm_for_connection_state();
  auto refused = geerpc::try_dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  CHECK_FALSE(refused);
  CHECK_FALSE(armed.load());  // the chosen allocation was made, and failed
  armed.store(false);
  CHECK(test::eventually([&] { return s.server.refused_connections() == 1; }, 2s));

  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  CHECK(client.template call<int>("Arith.Sum", Args{2, 3}) == 5);
  CHECK(s.server.refused_connections() == 1);
}

TEMPLATE_TEST_CASE("no memory for a request's arguments: it is answered busy, and nothing it counted stays counted",
                   "[alloc_failure][limits]", GEERPC_TRANSPORTS) {
  exempt = true;
  test::arith_server<TestType> s;
  auto client = geerpc::dial<TestType>(s.address, {.timeouts = {.connect = 2s}});
  // The server keeps a request's arguments in one allocation of their encoded size: a little more
  // than the string's. The reader's buffers for the frame are larger (the whole frame) or sized by
  // what the socket gave, so the first allocation in this range is that one.
  const std::string text(100'000, 'x');
  fail_from.store(text.size(), std::memory_order_relaxed);
  fail_to.store(text.size() + 16, std::memory_order_relaxed);
  armed.store(true, std::memory_order_release);
  const auto refused = client.template try_call<std::string>("Arith.Echo", text);
  armed.store(false);
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == geerpc::errc::busy);
  CHECK(refused.message() == "rpc server: no memory for the request");
  CHECK(s.server.inflight() == 0);
  CHECK(client.template call<std::string>("Arith.Echo", text) == text);
  CHECK(test::eventually([&] { return s.server.inflight() == 0; }, 2s));
}
