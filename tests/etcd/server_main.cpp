// A server in a process of its own, for the etcd tests that kill one with SIGKILL:
//   geerpc_etcd_test_server <etcd endpoint> <prefix> <ttl seconds>
// serves Who.Am (its address) on 127.0.0.1, registers in etcd, prints "ready <address>" once the
// keys are in etcd, and serves until its stdin closes (then withdraws and shuts down gracefully).
#include <cstdio>
#include <geerpc/etcd.hpp>
#include <geerpc/geerpc.hpp>
#include <iostream>
#include <string>

struct Who {
  std::string address;
  std::string am() { return address; }
};
using WhoApi = geerpc::service<"Who", geerpc::method<"Am", &Who::am>>;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: geerpc_etcd_test_server <etcd endpoint> <prefix> <ttl seconds>\n";
    return 2;
  }
  Who who;
  geerpc::server server;
  server.add<WhoApi>(who);
  who.address = server.listen("127.0.0.1:0");
  geerpc::etcd::registration entry(
      "Who", who.address,
      {.etcd = {.endpoints = {argv[1]}}, .prefix = argv[2], .ttl = std::chrono::seconds(std::stoi(argv[3]))});
  if (!entry.wait_registered(std::chrono::seconds(10))) {
    std::cerr << "not registered: " << entry.last_error() << "\n";
    return 1;
  }
  std::cout << "ready " << who.address << std::endl;
  while (std::getchar() != EOF) {
  }
  entry.withdraw();
  server.shutdown(std::chrono::seconds(1));
}
