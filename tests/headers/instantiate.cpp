// Instantiates geerpc's templates the way a user's program does, so that warnings inside them fire
// under the strict flags of tests/headers/CMakeLists.txt: a service of member functions, a free
// function and a lambda over the codec's every kind of value, both servers, a threaded and a
// blocking client, call, try_call and async_call, by name and through typed stubs. It is compiled,
// not run: what it checks is that a user's build stays quiet.
#include <geerpc/geerpc.hpp>
// Users never see the library's internal macros.
#if defined(GEERPC_ASSERT) || defined(GEERPC_BEGIN_NAMESPACE)
#error "geerpc/geerpc.hpp must #undef its internal macros"
#endif

#include <array>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

using namespace std::chrono_literals;

namespace {

enum class colour : std::uint8_t { red, green };

struct inner {
  std::int16_t small;
  std::uint64_t big;
  double real;
  float single;
  bool flag;
  char letter;
  colour hue;
};

struct everything {
  int number;
  unsigned count;
  std::string text;
  std::vector<inner> items;
  std::vector<std::byte> bytes;
  std::array<std::int32_t, 3> triple;
  std::optional<std::string> maybe;
  std::map<std::string, int> ordered;
  std::unordered_map<int, std::vector<std::string>> hashed;
  std::pair<long, short> couple;
  std::tuple<std::int8_t, std::uint16_t, std::string> several;
  std::chrono::milliseconds timeout;
  std::chrono::duration<float> seconds;
  std::chrono::system_clock::time_point when;
  std::variant<std::monostate, int, std::string> choice;
  std::set<std::string> tags;
  std::multiset<std::int16_t> votes;
  std::unordered_set<std::uint32_t> ids;
  std::unordered_multiset<std::string> words;
  std::deque<inner> queue;
  std::list<std::string> lines;
  std::unique_ptr<inner> owned;
  std::bitset<13> flags;
};

class ticket {
 public:
  ticket() = default;
  explicit ticket(std::uint32_t number) : number_(number) {}
  std::uint32_t number() const { return number_; }

 private:
  std::uint32_t number_ = 0;
};

struct args {
  int num1;
  int num2;
};

struct foo {
  int sum(const args& a) { return a.num1 + a.num2; }
  int slow(const args& a, std::stop_token stop) { return stop.stop_requested() ? 0 : a.num1; }
  everything echo(everything value) const { return value; }
  void forget(const std::string&) {}
  int ping() { return 1; }
  std::size_t count(std::string_view text, std::span<const std::int32_t> numbers, char c, std::stop_token) const {
    return text.size() + numbers.size() + static_cast<std::size_t>(c);
  }
  ticket next(const ticket& t) const { return ticket(t.number() + 1); }
};

std::vector<double> halve(const std::vector<double>& values) {
  std::vector<double> out;
  for (double v : values) out.push_back(v / 2);
  return out;
}

}  // namespace

template <>
struct geerpc::codec::serializer<ticket> {
  using wire_type = std::uint32_t;
  static wire_type to_wire(const ticket& t) { return t.number(); }
  static ticket from_wire(wire_type&& w) { return ticket(w); }
};

namespace {

using foo_api = geerpc::service<"Foo",                                   //
                                geerpc::method<"Sum", &foo::sum>,        //
                                geerpc::method<"Slow", &foo::slow>,      //
                                geerpc::method<"Echo", &foo::echo>,      //
                                geerpc::method<"Forget", &foo::forget>,  //
                                geerpc::method<"Ping", &foo::ping>,      //
                                geerpc::method<"Count", &foo::count>,    //
                                geerpc::method<"Next", &foo::next>>;
using free_api = geerpc::service<"Free",                           //
                                 geerpc::method<"Halve", &halve>,  //
                                 geerpc::method<"Len", [](const std::string& s) { return s.size(); }>,
                                 geerpc::method<"Mul", [](std::int64_t a, std::int64_t b) { return a * b; }>>;

// GCC 12's <stop_token> warns (-Wmaybe-uninitialized) at -O2 wherever it inlines `std::stop_source
// s;`: a libstdc++ false positive on the user's own line, whatever the user does with it. The
// test's stop sources are made here, out of line, so that every other warning still counts.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
[[gnu::noinline]] std::stop_source new_stop_source() { return std::stop_source(); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

template <class Client>
int exercise(Client& client) {
  std::stop_source stop = new_stop_source();
  const auto ctx = geerpc::with_timeout(1s).with_stop_token(stop.get_token());
  int total = client.template call<int>("Foo.Sum", args{1, 2});
  total += client.template call<int>(ctx, "Foo.Slow", args{3, 4});
  total += client.template call<foo_api::fn<"Sum">>({5, 6});
  total +=
      client.template call<foo_api::fn<"Slow">>(geerpc::with_deadline(std::chrono::steady_clock::now() + 1s), {7, 8});
  geerpc::result<everything> echoed = client.template try_call<foo_api::fn<"Echo">>(everything{});
  if (echoed) total += echoed.value().number;
  geerpc::result<void> forgot = client.template try_call<void>(ctx, "Foo.Forget", std::string("x"));
  if (!forgot) total += static_cast<int>(forgot.message().size());
  auto halves = client.template try_call<free_api::fn<"Halve">>(ctx, std::vector<double>{1.0, 2.0});
  if (halves) total += static_cast<int>(halves.value().size());
  const std::size_t length = client.template call<free_api::fn<"Len">>(std::string("abc"));
  total += static_cast<int>(length);
  total += client.template call<foo_api::fn<"Ping">>() + client.template call<int>(ctx, "Foo.Ping");
  const std::vector<std::int32_t> numbers{1, 2};
  total += static_cast<int>(client.template call<foo_api::fn<"Count">>(ctx, "text", numbers, 'c'));
  total += static_cast<int>(client.template call<std::size_t>("Foo.Count", "text", std::span(numbers), 'c'));
  total += static_cast<int>(client.template call<foo_api::fn<"Next">>(ticket(1)).number());
  total += static_cast<int>(client.template call<free_api::fn<"Mul">>(2, 3));
  total += static_cast<int>(client.template call<std::int64_t>("Free.Mul", std::int64_t{2}, std::int64_t{3}));
  return total + (client.is_open() ? 1 : 0);
}

template <class Transport>
int serve_and_call() {
  foo impl;
  geerpc::basic_server<Transport> server({.threads = {.handlers = 2}, .timeouts = {.frame = 1s}});
  server.template add<foo_api>(impl);
  server.template add<free_api>();
  const std::string address = server.listen("127.0.0.1:0");
  auto client = geerpc::dial<Transport>(address, {.timeouts = {.connect = 1s, .handle = 500ms}});
  int total = exercise(client);
  if (auto other = geerpc::try_dial<Transport>(address)) total += exercise(other.value());
  total += static_cast<int>(server.connection_count() + server.inflight());
  client.close();
  server.stop();
  return total;
}

int call_async(geerpc::client& client) {
  std::stop_source stop = new_stop_source();
  auto by_name = client.async_call<int>(geerpc::with_stop_token(stop.get_token()), "Foo.Slow", args{5, 6});
  auto typed = client.async_call<foo_api::fn<"Sum">>({1, 2});
  auto nothing = client.async_call<void>("Foo.Forget", std::string("y"));
  int total = 0;
  auto echo = client.async_call<foo_api::fn<"Echo">>(geerpc::with_timeout(1s), everything{});
  auto product = client.async_call<free_api::fn<"Mul">>(4, 5);
  auto ping = client.async_call<int>("Foo.Ping");
  total += static_cast<int>(product.get()) + ping.get();
  if (by_name.wait_for(100ms)) total += by_name.get();
  if (typed.wait_until(std::chrono::steady_clock::now() + 100ms) && typed.ready()) total += typed.try_get().value();
  nothing.cancel();
  if (!nothing.try_get()) ++total;
  echo.wait();
  return total + (echo.valid() ? 1 : 0);
}

}  // namespace

int main() {
  int total = serve_and_call<geerpc::threaded>() + serve_and_call<geerpc::blocking>() +
              serve_and_call<geerpc::basic_threaded<geerpc::tuning::none>>();
  foo impl;
  geerpc::server server;
  server.add<foo_api>(impl);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));
  total += call_async(client);
  return total == 0 ? 0 : 1;
}
