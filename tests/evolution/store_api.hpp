// The "Store" service of the cross-version test, as version SERVICE_VERSION (1 or 2) of a program
// declares it: the same types, v2's with a field added at the end of put_args, put_reply and
// item (docs/protocol.md 5.7), and one incompatible change (bad_args.count: int32 in v1, string
// in v2). Its handlers echo what they received, so that a client can check every field.
#pragma once

#include <geerpc/geerpc.hpp>

#include <cstdint>
#include <string>
#include <vector>

#if !defined(SERVICE_VERSION) || (SERVICE_VERSION != 1 && SERVICE_VERSION != 2)
#error "build the cross-version test with -DSERVICE_VERSION=1 or -DSERVICE_VERSION=2"
#endif

namespace evolution {

inline constexpr int version = SERVICE_VERSION;

struct put_args {
  std::string key;
  std::int64_t amount;
#if SERVICE_VERSION >= 2
  std::string note = "none";  // a v1 client sends none: a v2 server sees this default
#endif
};

struct put_reply {
  bool stored;
  std::int64_t total;
#if SERVICE_VERSION >= 2
  std::string by = "unset";  // a v1 server sends none: a v2 client sees this default
#endif
};

// Nested: an item inside a vector inside the argument and the result.
struct item {
  std::string name;
#if SERVICE_VERSION >= 2
  std::int32_t quantity = 1;
#endif
};

struct order {
  std::vector<item> items;
};

// A field after the items, so that an item's trailing field skipped or defaulted wrongly would
// misplace what follows it.
struct receipt {
  std::vector<item> items;
  std::string summary;
};

// The incompatible pair: a field's type changed.
struct bad_args {
  std::string id;
#if SERVICE_VERSION >= 2
  std::string count;
#else
  std::int32_t count;
#endif
};

// What each version's server answers (the client computes the same to know what to expect).
inline std::int64_t total_of(std::int64_t amount) { return amount * 2 + 1; }

// What a server of this version says it saw, every field it knows.
inline std::string describe(const put_args& a) {
  std::string out = "key=" + a.key + " amount=" + std::to_string(a.amount);
#if SERVICE_VERSION >= 2
  out += " note=" + a.note;
#endif
  return out;
}

inline std::string describe(const std::vector<item>& items) {
  std::string out;
  for (const item& i : items) {
    if (!out.empty()) out += ',';
    out += i.name;
#if SERVICE_VERSION >= 2
    out += " x" + std::to_string(i.quantity);
#endif
  }
  return out;
}

struct Store {
  put_reply put(const put_args& a) {
#if SERVICE_VERSION >= 2
    return {true, total_of(a.amount), "v2 saw note " + a.note};
#else
    return {true, total_of(a.amount)};
#endif
  }
  std::string seen(const put_args& a) { return describe(a); }
  // Two arguments: the order's trailing fields must not shift the customer's name.
  receipt place(const order& o, const std::string& customer) { return {o.items, customer + ": " + describe(o.items)}; }
  std::string bad(const bad_args& a) { return "bad " + a.id; }
};

using StoreApi = geerpc::service<"Store",                                 //
                                 geerpc::method<"Put", &Store::put>,      //
                                 geerpc::method<"Seen", &Store::seen>,    //
                                 geerpc::method<"Order", &Store::place>,  //
                                 geerpc::method<"Bad", &Store::bad>>;

}  // namespace evolution
