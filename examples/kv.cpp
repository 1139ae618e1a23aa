// A key-value service: values of several types (a std::variant), keys listed as a std::set, time
// stamps as system_clock time points; writes need a token, which a server interceptor checks in
// the call's metadata, and which a client interceptor attaches to every call of its client. The
// handlers read who called through geerpc::call_context.
#include <geerpc/geerpc.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

using namespace std::chrono_literals;

using value = std::variant<std::string, std::int64_t, std::vector<std::string>>;

struct entry {
  value data;
  std::chrono::system_clock::time_point written;
  std::uint64_t writer_connection;  // which connection wrote it (call_context::connection_id)
};

class kv_store {
 public:
  void put(const std::string& key, const value& data, const geerpc::call_context& ctx) {
    std::lock_guard lock(mutex_);
    entries_[key] = {data, std::chrono::system_clock::now(), ctx.connection_id()};
  }
  std::optional<entry> get(const std::string& key) {
    std::lock_guard lock(mutex_);
    const auto found = entries_.find(key);
    if (found == entries_.end()) return std::nullopt;
    return found->second;
  }
  std::set<std::string> keys(const std::string& prefix) {
    std::lock_guard lock(mutex_);
    std::set<std::string> out;
    for (auto it = entries_.lower_bound(prefix); it != entries_.end() && it->first.starts_with(prefix); ++it)
      out.insert(it->first);
    return out;
  }
  std::size_t erase(const std::set<std::string>& keys) {
    std::lock_guard lock(mutex_);
    std::size_t erased = 0;
    for (const auto& key : keys) erased += entries_.erase(key);
    return erased;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, entry> entries_;
};

using KvApi = geerpc::service<"Kv",                                   //
                              geerpc::method<"Put", &kv_store::put>,  //
                              geerpc::method<"Get", &kv_store::get>,  //
                              geerpc::method<"Keys", &kv_store::keys>, geerpc::method<"Erase", &kv_store::erase>>;

constexpr std::string_view token = "Bearer demo-token";

int main() {
  kv_store store;
  geerpc::server server;
  server.add<KvApi>(store);
  // Reads are open to all; writes need the token.
  std::atomic<int> refused{0}, served{0};
  server.use(
      {.before = [](const geerpc::call_context& ctx) -> std::optional<geerpc::error> {
         const bool writes = ctx.method() == "Kv.Put" || ctx.method() == "Kv.Erase";
         if (!writes) return std::nullopt;
         const auto presented = ctx.metadata("authorization");
         if (!presented) return geerpc::error{geerpc::errc::unauthenticated, "kv: writes need a token"};
         if (*presented != token) return geerpc::error{geerpc::errc::permission_denied, "kv: wrong token"};
         return std::nullopt;
       },
       .after = [&](const geerpc::call_context&, const geerpc::call_result& r) { ++(r.ok() ? served : refused); }});
  const std::string address = server.listen("127.0.0.1:0");

  // A client whose interceptor attaches the token to every call.
  geerpc::options with_token;
  with_token.interceptors.push_back({.before = [](geerpc::client_call& call) {
    call.ctx = call.ctx.with_metadata("authorization", std::string(token));
  }});
  auto writer = geerpc::dial(address, with_token);
  writer.call<void>("Kv.Put", std::string("color"), value{std::string("teal")});
  writer.call<void>("Kv.Put", std::string("count"), value{std::int64_t{42}});
  writer.call<KvApi::fn<"Put">>(std::string("crew"), value{std::vector<std::string>{"ada", "grace"}});

  // A client without one may read, not write.
  auto reader = geerpc::dial(address);
  const auto count = reader.call<KvApi::fn<"Get">>(std::string("count"));
  std::cout << "count = " << std::get<std::int64_t>(count->data) << "\n";
  std::cout << "keys under \"c\":";
  for (const auto& key : reader.call<KvApi::fn<"Keys">>(std::string("c"))) std::cout << ' ' << key;
  std::cout << "\n";
  const auto denied = reader.try_call<KvApi::fn<"Erase">>(std::set<std::string>{"color"});
  std::cout << "erase without a token: " << denied.message() << "\n";
  const auto wrong = reader.try_call<std::size_t>(geerpc::with_metadata("authorization", "Bearer guess"), "Kv.Erase",
                                                  std::set<std::string>{"color"});
  std::cout << "erase with a wrong token: " << wrong.message() << "\n";
  std::cout << "erased with the token: " << writer.call<KvApi::fn<"Erase">>(std::set<std::string>{"color", "none"})
            << "\n";
  std::cout << "color now: " << (reader.call<KvApi::fn<"Get">>(std::string("color")) ? "present" : "absent") << "\n";

  server.stop();  // after() has seen every call once its handler returned
  std::cout << "calls served " << served << ", refused " << refused << "\n";
  return denied.code() == geerpc::errc::unauthenticated && wrong.code() == geerpc::errc::permission_denied ? 0 : 1;
}
