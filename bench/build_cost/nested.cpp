// What bench/build_cost.sh compiles to show how compile time grows with a type's nesting depth:
// a method whose argument nests DEPTH levels, registered on a server and called, through geerpc
// (the default), or walked by plain code with no geerpc (-DPLAIN), which shows what the compiler
// and the standard library cost on their own. By default it nests std::vector<std::vector<...>>,
// whose written form names every default allocator (std::vector<X, std::allocator<X>>, X twice per
// level); -DSHAPE_LEVEL nests a struct template holding a vector of the level below.
#include <cstddef>
#include <vector>
#ifndef PLAIN
#include <geerpc/geerpc.hpp>
#endif

#ifndef DEPTH
#define DEPTH 4
#endif

template <int Depth>
struct level {
  std::vector<level<Depth - 1>> items;
};
template <>
struct level<0> {
  int value;
};

template <class T, int Depth>
struct nest {
  using type = std::vector<typename nest<T, Depth - 1>::type>;
};
template <class T>
struct nest<T, 0> {
  using type = T;
};

#ifdef SHAPE_LEVEL
using nested = level<DEPTH>;
#else
using nested = nest<int, DEPTH>::type;
#endif

#ifdef PLAIN
// The plain walk: make one element at each level, as a decoder would, and visit them all.
template <class T>
struct walk {
  static std::size_t go(T&) { return 1; }
};
template <class E>
struct walk<std::vector<E>> {
  static std::size_t go(std::vector<E>& v) {
    std::size_t n = walk<E>::go(v.emplace_back());
    for (auto& item : v) n += walk<E>::go(item);
    return n;
  }
};
template <>
struct walk<level<0>> {
  static std::size_t go(level<0>&) { return 1; }
};
template <int Depth>
struct walk<level<Depth>> {
  static std::size_t go(level<Depth>& l) { return walk<decltype(l.items)>::go(l.items); }
};

int main() {
  nested value{};
  return static_cast<int>(walk<nested>::go(value));
}
#else
struct sink {
  int take(const nested& value) { return sizeof(value) > 0 ? 1 : 0; }
};
using SinkApi = geerpc::service<"Sink", geerpc::method<"Take", &sink::take>>;

int main() {
  sink impl;
  geerpc::server server;
  server.add<SinkApi>(impl);
  auto client = geerpc::dial(server.listen("127.0.0.1:0"));
  return client.call<SinkApi::fn<"Take">>(nested{}) == 1 ? 0 : 1;
}
#endif
