// Out of kernel resources as a threaded server watches a connection: epoll_ctl fails (ENOSPC when
// the user's fs.epoll.max_user_watches is used up, or ENOMEM). The connection is closed and
// counted (refused_connections()), its descriptor does not leak, and the server keeps serving.
// Here, beside the allocation failures, because it too replaces a function of the whole program:
// epoll_ctl, so that one chosen call fails as the kernel would fail it.
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "catch.hpp"
#include "support.hpp"

using namespace std::chrono_literals;
using test::Args;

namespace {

std::atomic<bool> fail_next_watch{false};  // the next EPOLL_CTL_ADD fails with ENOSPC, and disarms

// Descriptors this process has open.
int open_fds() {
  int n = 0;
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    while (::readdir(dir) != nullptr) ++n;
    ::closedir(dir);
  }
  return n;
}

}  // namespace

// The program's epoll_ctl: the kernel's, unless a test armed a failure. (The clients dialled below
// are blocking ones, which poll() and never call it: the armed failure is the server's.)
extern "C" int epoll_ctl(int epfd, int op, int fd, epoll_event* event) noexcept {
  if (op == EPOLL_CTL_ADD && fail_next_watch.exchange(false)) {
    errno = ENOSPC;
    return -1;
  }
  return static_cast<int>(::syscall(SYS_epoll_ctl, epfd, op, fd, event));
}

TEMPLATE_TEST_CASE("a connection the kernel will not watch is closed and counted, and the server serves on",
                   "[alloc_failure][limits][reactors]", GEERPC_ASYNC_TRANSPORTS) {
  test::arith_server<TestType> s;
  const int fds_before = open_fds();

  fail_next_watch.store(true);
  auto refused = geerpc::try_dial<geerpc::blocking>(s.address, {.timeouts = {.connect = 5s}});
  CHECK_FALSE(refused);                                    // the server closed it: no handshake reply
  CHECK(refused.code() != geerpc::errc::connect_timeout);  // closed at once, not left open and unread
  CHECK_FALSE(fail_next_watch.load());                     // the armed call was made, and failed
  fail_next_watch.store(false);
  CHECK(s.server.refused_connections() == 1);
  CHECK(s.server.connection_count() == 0);
  // The statistics count it as turned away too, for want of resources (the debug page's JSON).
  const std::string stats = test::http_get(s.address, "/debug/geerpc/stats.json");
  const auto turned_away = stats.find("\"turned_away\":");
  REQUIRE(turned_away != std::string::npos);
  CHECK(stats.find("\"connection_resources\":1", turned_away) != std::string::npos);
  // Nothing leaked: the server's end of the socket is closed too (the client's was, with `refused`).
  CHECK(test::eventually([&] { return open_fds() == fds_before; }));

  auto client = geerpc::dial<geerpc::blocking>(s.address, {.timeouts = {.connect = 5s}});
  CHECK(client.template call<int>("Arith.Sum", Args{2, 3}) == 5);
  CHECK(s.server.refused_connections() == 1);
}

TEST_CASE("a reactor that cannot watch its listening socket makes listen() throw, saying so", "[alloc_failure]") {
  geerpc::server server;
  fail_next_watch.store(true);
  // The first watch listen() asks for is a reactor's wake-up fd, as the reactor starts.
  CHECK_THROWS_WITH(server.listen("127.0.0.1:0"), Catch::Contains("could not watch a reactor's wake-up fd"));
  fail_next_watch.store(false);
}
