// The C++ side of the go_interop example (run.sh): Go's net/rpc/jsonrpc, both ways.
//   go_interop_arith serve ADDRESS_FILE   serves Arith with the JSON codec on a free loopback port,
//                                         which Go's jsonrpc.Dial calls (docs/protocol.md 9)
//   go_interop_arith call HOST:PORT       calls a Go server's Arith through jsonrpc@ (9.6);
//                                         exits 1 on a wrong answer
#include <geerpc/json.hpp>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace std::chrono_literals;

// Go's Args{A, B} and Quotient{Quo, Rem}: Go matches member names ignoring case, and so does geerpc.
struct Args {
  int a;
  int b;
};

struct Quotient {
  int quo;
  int rem;
  bool operator==(const Quotient&) const = default;
};

struct Arith {
  int sum(const Args& args) { return args.a + args.b; }
  Quotient divide(const Args& args) {
    if (args.b == 0) throw std::runtime_error("divide by zero");  // Go's client gets this text
    return {args.a / args.b, args.a % args.b};
  }
};

using ArithApi = geerpc::service<"Arith", geerpc::method<"Sum", &Arith::sum>, geerpc::method<"Divide", &Arith::divide>>;

namespace {

// Serves until SIGTERM or SIGINT (run.sh stops it by its PID), or one minute.
int serve(const std::string& address_file) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // before the server's threads start: they inherit it

  Arith arith;
  geerpc::basic_server<geerpc::threaded, geerpc::json_codec> server;
  server.add<ArithApi>(arith);
  const std::string address = server.listen("127.0.0.1:0");
  std::ofstream(address_file + ".tmp") << address;
  std::filesystem::rename(address_file + ".tmp", address_file);  // whole, for run.sh to read

  const timespec limit{60, 0};
  sigtimedwait(&stop, nullptr, &limit);
  return 0;
}

bool check(bool ok, std::string_view what) {
  std::cout << (ok ? "C++ called Go: " : "FAIL: ") << what << "\n";
  return ok;
}

int call(const std::string& address) {
  auto client = geerpc::dial<geerpc::threaded, geerpc::json_codec>("jsonrpc@" + address, {.timeouts = {.connect = 5s}});
  bool ok = true;
  const int sum = client.call<int>(geerpc::with_timeout(5s), "Arith.Sum", Args{2, 3});
  ok &= check(sum == 5, "Arith.Sum(2, 3) = " + std::to_string(sum));
  const auto quotient = client.call<Quotient>(geerpc::with_timeout(5s), "Arith.Divide", Args{7, 2});
  ok &= check(quotient == Quotient{3, 1},
              "Arith.Divide(7, 2) = {" + std::to_string(quotient.quo) + ", " + std::to_string(quotient.rem) + "}");
  // Go's error text comes back verbatim, as a handler's error (remote_error).
  const auto refused = client.try_call<Quotient>(geerpc::with_timeout(5s), "Arith.Divide", Args{1, 0});
  ok &= check(!refused && refused.code() == geerpc::errc::remote_error && refused.message() == "divide by zero",
              "Arith.Divide(1, 0) failed: " + refused.message());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc == 3 ? argv[1] : "";
  if (mode == "serve") return serve(argv[2]);
  if (mode == "call") return call(argv[2]);
  std::cerr << "usage: go_interop_arith serve ADDRESS_FILE | call HOST:PORT\n";
  return 2;
}
