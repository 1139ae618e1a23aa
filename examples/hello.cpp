// The seed's first example: a Foo service with Sum, called by name, through a typed stub, and from
// several threads at once over one connection.
#include <geerpc/geerpc.hpp>

#include <iostream>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

struct Args {
  int num1;
  int num2;
};

struct Foo {
  int sum(const Args& args) { return args.num1 + args.num2; }
};

using FooApi = geerpc::service<"Foo", geerpc::method<"Sum", &Foo::sum>>;

int main() {
  Foo foo;
  geerpc::server server;
  server.add<FooApi>(foo);
  const std::string address = server.listen("127.0.0.1:0");
  std::cout << "server listening on " << address << "\n";

  auto client = geerpc::dial(address, {.timeouts = {.connect = 1s}});

  // Five concurrent calls over one connection, like the seed's goroutines.
  std::vector<std::jthread> callers;
  callers.reserve(5);
  for (int i = 0; i < 5; ++i) {
    callers.emplace_back([&client, i] {
      const int reply = client.call<int>(geerpc::with_timeout(1s), "Foo.Sum", Args{i, i * i});
      // One string per line, so that the threads' lines do not interleave.
      std::cout << (std::to_string(i) + " + " + std::to_string(i * i) + " = " + std::to_string(reply) + "\n");
    });
  }
  callers.clear();  // joins

  // The typed stub: the argument and reply types come from FooApi and are checked by the compiler.
  const int typed = client.call<FooApi::fn<"Sum">>({20, 22});
  std::cout << "typed stub: 20 + 22 = " << typed << "\n";

  // Errors keep GeeRPC's wording.
  auto missing = client.try_call<int>("Bar.Sum", Args{1, 2});
  std::cout << "unknown service: " << missing.message() << "\n";
}
