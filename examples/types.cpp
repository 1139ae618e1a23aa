// The types a service can take and return: several arguments, the standard library's types
// (durations, system_clock time points, variants, sets, unique_ptr, ...), a std::string_view
// parameter, and a class of one's own with private members, carried by a geerpc::codec::serializer.
#include <geerpc/geerpc.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

using namespace std::chrono_literals;

// A class that keeps an invariant: not an aggregate, so the codec cannot see its fields.
class money {
 public:
  money() = default;
  money(std::string currency, std::int64_t cents) : currency_(std::move(currency)), cents_(cents) {
    if (currency_.size() != 3) throw std::invalid_argument("a currency code has three letters");
  }
  const std::string& currency() const { return currency_; }
  std::int64_t cents() const { return cents_; }

 private:
  std::string currency_ = "EUR";
  std::int64_t cents_ = 0;
};

// How money travels: as a (currency, cents) pair. from_wire runs the constructor, so a peer cannot
// make a money that breaks its invariant: the call fails with bad_request instead.
template <>
struct geerpc::codec::serializer<money> {
  using wire_type = std::pair<std::string, std::int64_t>;
  static wire_type to_wire(const money& m) { return {m.currency(), m.cents()}; }
  static money from_wire(wire_type&& w) { return money(std::move(w.first), w.second); }
};

struct Ledger {
  std::mutex mutex;
  std::map<std::string, money, std::less<>> balances;
  std::set<std::string> frozen;

  // Several arguments, one of them a view of the request's bytes.
  money deposit(std::string_view account, const money& amount) {
    std::lock_guard lock(mutex);
    auto [it, added] = balances.try_emplace(std::string(account), amount.currency(), 0);
    if (it->second.currency() != amount.currency()) throw std::invalid_argument("wrong currency");
    it->second = money(amount.currency(), it->second.cents() + amount.cents());
    return it->second;
  }
  // A variant: the balance, or why there is none.
  std::variant<money, std::string> balance(const std::string& account) {
    std::lock_guard lock(mutex);
    if (frozen.contains(account)) return std::string("account frozen");
    auto it = balances.find(account);
    if (it == balances.end()) return std::string("no such account");
    return it->second;
  }
  // No arguments; a set back; durations and time points both ways.
  std::set<std::string> accounts() {
    std::lock_guard lock(mutex);
    std::set<std::string> names;
    for (const auto& [name, amount] : balances) names.insert(name);
    return names;
  }
  std::chrono::system_clock::time_point statement_due(std::chrono::system_clock::time_point from,
                                                      std::chrono::hours period) {
    return from + period;
  }
};

using LedgerApi = geerpc::service<"Ledger",                                     //
                                  geerpc::method<"Deposit", &Ledger::deposit>,  //
                                  geerpc::method<"Balance", &Ledger::balance>,  //
                                  geerpc::method<"Accounts", &Ledger::accounts>,
                                  geerpc::method<"StatementDue", &Ledger::statement_due>>;

int main() {
  Ledger ledger;
  ledger.frozen.insert("mallory");
  geerpc::server server;
  server.add<LedgerApi>(ledger);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"), {.timeouts = {.connect = 1s}});

  client.call<LedgerApi::fn<"Deposit">>("alice", money("EUR", 1250));
  const money now = client.call<LedgerApi::fn<"Deposit">>("alice", money("EUR", 750));
  std::cout << "alice: " << now.cents() << " " << now.currency() << "\n";  // 2000 EUR

  for (const char* account : {"alice", "bob", "mallory"}) {
    auto balance = client.call<LedgerApi::fn<"Balance">>(account);
    if (const money* m = std::get_if<money>(&balance))
      std::cout << account << ": " << m->cents() << " " << m->currency() << "\n";
    else
      std::cout << account << ": " << std::get<std::string>(balance) << "\n";
  }

  for (const std::string& name : client.call<LedgerApi::fn<"Accounts">>()) std::cout << "account " << name << "\n";

  const auto from = std::chrono::sys_days{std::chrono::year{2026} / 12 / 1};
  const auto due = client.call<LedgerApi::fn<"StatementDue">>(from, std::chrono::hours(24 * 30));
  std::cout << "statement due " << std::chrono::duration_cast<std::chrono::days>(due - from).count()
            << " days after the first\n";

  // A money that breaks its invariant never reaches the handler.
  auto bad = client.try_call<money>("Ledger.Deposit", "alice", std::pair<std::string, std::int64_t>("EURO", 1));
  std::cout << "bad currency: " << bad.error().message << "\n";
  return bad ? 1 : 0;
}
