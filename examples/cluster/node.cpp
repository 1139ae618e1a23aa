// One server of the cluster example: serves Node.Whoami on a loopback port the kernel picks,
// registers it in etcd under a lease (3 s, so that the example's kill shows quickly), and on
// SIGTERM or SIGINT withdraws from etcd and shuts down gracefully.
//   cluster_node <etcd endpoint> <name>
#include <geerpc/etcd.hpp>
#include <geerpc/geerpc.hpp>

#include <csignal>
#include <iostream>
#include <string>

using namespace std::chrono_literals;

struct Node {
  std::string name;
  std::string whoami() const { return name; }
};
using NodeApi = geerpc::service<"Node", geerpc::method<"Whoami", &Node::whoami>>;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: cluster_node <etcd endpoint> <name>\n";
    return 2;
  }
  // The signals are taken by sigwait below, on this thread: block them before any thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  Node node{argv[2]};
  geerpc::server server;
  server.add<NodeApi>(node);
  const std::string address = server.listen("127.0.0.1:0");
  geerpc::etcd::registration entry("Node", address, {.etcd = {.endpoints = {argv[1]}}, .ttl = 3s});
  if (!entry.wait_registered(10s)) {
    std::cerr << node.name << ": could not register in etcd: " << entry.last_error() << "\n";
    return 1;
  }
  std::cout << node.name << " serving on " << address << ", registered in etcd" << std::endl;

  int signal = 0;
  sigwait(&signals, &signal);
  entry.withdraw();  // clients stop choosing this node now
  server.shutdown(2s);
  std::cout << node.name << " left gracefully" << std::endl;
}
