// The cluster example's client: a balanced client over the nodes etcd lists. Makes `calls` calls,
// round-robin, and prints how they spread and how many failed.
//   cluster_client <etcd endpoint> <calls>
#include <geerpc/etcd.hpp>
#include <geerpc/geerpc.hpp>

#include <iostream>
#include <map>
#include <memory>
#include <string>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: cluster_client <etcd endpoint> <calls>\n";
    return 2;
  }
  auto nodes = std::make_shared<geerpc::etcd::discovery>(
      "Node", geerpc::etcd::discovery_options{.etcd = {.endpoints = {argv[1]}}});
  // Whoami may run twice: a call whose connection broke after it was sent moves to another node.
  geerpc::balanced_client client(nodes, {.mode = geerpc::select_mode::round_robin, .idempotent = {"Node.Whoami"}});

  std::map<std::string, int> spread;
  int failed = 0;
  const int calls = std::stoi(argv[2]);
  for (int i = 0; i < calls; ++i) {
    auto reply = client.try_call<std::string>(geerpc::with_timeout(1s), "Node.Whoami");
    if (reply)
      ++spread[reply.value()];
    else if (++failed == 1)
      std::cout << "  first failure: " << reply.message() << "\n";
  }
  const auto listed = nodes->servers();
  std::cout << "  etcd lists " << (listed ? listed.value()->size() : 0) << " nodes; " << calls << " calls:";
  for (const auto& [name, count] : spread) std::cout << " " << name << "=" << count;
  std::cout << ", failed=" << failed << "\n";
  return failed == 0 ? 0 : 1;
}
