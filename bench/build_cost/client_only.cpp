// What bench/build_cost.sh compiles as a client-only file: one typed call, no server.
#include <geerpc/client.hpp>

struct Args {
  int num1;
  int num2;
};

int main() {
  auto client = geerpc::dial("127.0.0.1:9999");
  return client.call<int>("Foo.Sum", Args{1, 2}) == 3 ? 0 : 1;
}
