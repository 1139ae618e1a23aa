// The harness's control: correct use of everything the other cases misuse must compile with the
// same flags, so a failing case is known to fail for its own reason and not the harness's.
// expect: compiles
#include <cstddef>
#include <geerpc/geerpc.hpp>
#include <stop_token>
#include <string>
#include <vector>

struct args {
  int num1;
  int num2;
};

struct reading {
  std::string sensor;
  double value;
};

struct calc {
  int sum(const args& a) { return a.num1 + a.num2; }
  int product(args a) const { return a.num1 * a.num2; }
  void wait(const args&, std::stop_token stop) { (void)stop.stop_requested(); }
};

using calc_api =
    geerpc::service<"Calc", geerpc::method<"Sum", &calc::sum>, geerpc::method<"Product", &calc::product>,
                    geerpc::method<"Wait", &calc::wait>, geerpc::method<"Echo", [](const reading& r) { return r; }>>;

int main() {
  std::vector<std::byte> out;
  geerpc::binary_codec::encode(reading{"t", 1.5}, out);
  reading back{};
  (void)geerpc::binary_codec::decode(out, back);

  calc impl;
  geerpc::server server;
  server.add<calc_api>(impl);

  geerpc::client client;
  try {
    int sum = client.call<calc_api::fn<"Sum">>({1, 2});
    reading echoed = client.call<calc_api::fn<"Echo">>(reading{"x", 2.0});
    int by_name = client.call<int>("Calc.Sum", args{3, 4});
    (void)sum;
    (void)echoed;
    (void)by_name;
  } catch (const geerpc::rpc_error&) {
    // Not connected: every call fails. This file only has to compile.
  }
}
