// What bench/build_cost.sh compiles: a user's translation unit with one service, a server and one
// call, the figure README.md ("Build time") reports.
#include <geerpc/geerpc.hpp>

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
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));
  return client.call<int>("Foo.Sum", Args{1, 2}) == 3 ? 0 : 1;
}
