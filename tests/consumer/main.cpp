// What a user's first program does: serve a method, call it, and see a deadline hold.
#include <geerpc/geerpc.hpp>

#include <cstdio>
#include <thread>

using namespace std::chrono_literals;

struct Args {
  int num1;
  int num2;
};

struct Foo {
  int sum(const Args& a) { return a.num1 + a.num2; }
  int wait(const Args&, std::stop_token stop) {
    while (!stop.stop_requested()) std::this_thread::sleep_for(1ms);
    return 0;
  }
};

using FooApi = geerpc::service<"Foo", geerpc::method<"Sum", &Foo::sum>, geerpc::method<"Wait", &Foo::wait>>;

int main() {
  Foo foo;
  geerpc::server server;
  server.add<FooApi>(foo);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"), {.timeouts = {.connect = 1s}});
  const int sum = client.call<FooApi::fn<"Sum">>({1, 2});
  const auto late = client.try_call<int>(geerpc::with_timeout(50ms), "Foo.Wait", Args{});
  std::printf("geerpc %s: 1 + 2 = %d; %s\n", geerpc::version, sum, late.message().c_str());
  return sum == 3 && late.code() == geerpc::errc::deadline_exceeded ? 0 : 1;
}
