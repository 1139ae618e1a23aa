// The seed's three timeout scenarios, and what a handler sees when its caller gives up.
//   1. connect timeout: a server that accepts but never answers the handshake;
//   2. call timeout: the caller's deadline (Go's context) passes while the handler works;
//   3. handle timeout: the server answers "request handle timeout" when a handler runs too long.
#include <geerpc/geerpc.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <system_error>
#include <thread>

using namespace std::chrono_literals;

struct Args {
  int num1;
  int num2;
};

struct Foo {
  std::atomic<int> stops_seen{0};

  int sum(const Args& args) { return args.num1 + args.num2; }

  // Works for about a second, but gives up as soon as its stop_token says nobody waits any more.
  int slow_sum(const Args& args, std::stop_token stop) {
    for (int i = 0; i < 100 && !stop.stop_requested(); ++i) std::this_thread::sleep_for(10ms);
    if (stop.stop_requested()) stops_seen.fetch_add(1);
    return args.num1 + args.num2;
  }
};

using FooApi = geerpc::service<"Foo", geerpc::method<"Sum", &Foo::sum>, geerpc::method<"SlowSum", &Foo::slow_sum>>;

// A listener that accepts connections but holds back the handshake reply for `delay`.
class slow_handshake_server {
 public:
  explicit slow_handshake_server(std::chrono::milliseconds delay) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0)
      throw std::system_error(errno, std::generic_category(), "slow_handshake_server");
    port_ = ntohs(address.sin_port);
    thread_ = std::jthread([this, delay](std::stop_token stop) {
      while (!stop.stop_requested()) {
        const int peer = ::accept(fd_, nullptr, nullptr);
        if (peer < 0) return;
        std::this_thread::sleep_for(delay);
        std::vector<std::byte> reply;
        geerpc::wire::encode_hello_reply({true, geerpc::wire::default_max_frame_size, {}}, reply);
        [[maybe_unused]] auto n = ::send(peer, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(peer);
      }
    });
  }
  ~slow_handshake_server() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.request_stop();
    thread_.join();
    ::close(fd_);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
  std::jthread thread_;
};

int main() {
  std::cout << "1. connect timeout\n";
  {
    slow_handshake_server stalling(500ms);
    auto failed = geerpc::try_dial(stalling.address(), {.timeouts = {.connect = 200ms}});
    std::cout << "   timeouts.connect = 200ms: " << failed.message() << "\n";
    auto waited = geerpc::try_dial(stalling.address(), {.timeouts = {.connect = 0s}});
    std::cout << "   timeouts.connect = 0 (no limit): "
              << (waited ? "connected once the server answered" : waited.message()) << "\n";
  }

  Foo foo;
  geerpc::server server;
  server.add<FooApi>(foo);
  const std::string address = server.listen("127.0.0.1:0");

  std::cout << "2. call timeout (the caller's deadline)\n";
  {
    auto client = geerpc::dial(address);
    auto reply = client.try_call<int>(geerpc::with_timeout(100ms), "Foo.SlowSum", Args{1, 2});
    std::cout << "   with_timeout(100ms): " << reply.message() << "\n";
    auto again = client.try_call<int>(geerpc::with_timeout(1s), "Foo.Sum", Args{1, 2});
    std::cout << "   the connection stays usable: 1 + 2 = " << again.value() << "\n";
  }

  std::cout << "3. handle timeout (the server's limit)\n";
  {
    auto client = geerpc::dial(address, {.timeouts = {.handle = 100ms}});
    auto reply = client.try_call<int>("Foo.SlowSum", Args{1, 2});
    std::cout << "   timeouts.handle = 100ms: " << reply.message() << "\n";
  }

  std::cout << "4. cancellation through a std::stop_token\n";
  {
    auto client = geerpc::dial(address);
    std::stop_source source;
    std::jthread canceller([&] {
      std::this_thread::sleep_for(100ms);
      source.request_stop();
    });
    auto reply = client.try_call<int>(geerpc::with_stop_token(source.get_token()), "Foo.SlowSum", Args{1, 2});
    std::cout << "   stop requested after 100ms: " << reply.message() << "\n";
  }

  server.stop();  // joins the handlers, so every stop they saw is counted
  std::cout << "handlers that saw their stop_token fire: " << foo.stops_seen.load() << " of 3\n";
}
