// Types the codec fuzzer decodes into: nested aggregates covering every kind the codec supports.
#pragma once

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
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

namespace fuzz {

enum class colour : std::uint8_t { red, green, blue };
enum class toggle : bool { off, on };

struct point {
  double x;
  float y;
};

struct leaf {
  std::string name;
  std::vector<std::uint16_t> numbers;
  std::optional<point> where;
  colour tint;
  toggle state;
  bool flag;
};

struct tree {
  std::int64_t id;
  std::vector<leaf> leaves;
  std::map<std::string, std::vector<std::int32_t>> index;
  std::unordered_map<std::uint32_t, std::optional<std::string>> notes;
  std::tuple<char, std::pair<std::int8_t, std::uint64_t>, std::array<leaf, 2>> extras;
  std::vector<std::vector<bool>> bits;
};

// One byte on the wire (an empty optional) for 4097 in memory: the shape of the decode budget's
// worst case.
using pages = std::vector<std::optional<std::array<char, 4096>>>;

// Containers whose empty or small elements cost 24 to 100 bytes each in memory for 1 to 3 on the
// wire: nested vectors, strings, tree and hash nodes, nested optionals.
struct sparse {
  std::vector<std::vector<std::int32_t>> rows;
  std::vector<std::string> words;
  std::map<std::uint16_t, std::string> names;
  std::unordered_map<std::uint8_t, std::vector<bool>> flags;
  std::vector<std::optional<std::optional<std::array<std::uint64_t, 16>>>> slots;
};

// The standard types beyond the first few, nested.
struct modern {
  std::chrono::milliseconds timeout;
  std::chrono::system_clock::time_point when;
  std::variant<std::monostate, std::int32_t, std::string, leaf> choice;
  std::set<std::string> tags;
  std::multiset<std::uint8_t> votes;
  std::unordered_set<std::uint32_t> ids;
  std::deque<std::string> queue;
  std::list<std::vector<std::uint16_t>> chunks;
  std::unique_ptr<leaf> owned;
  std::bitset<13> flags;
};

// The new types' cheapest encodings for what they cost in memory: allocated empty pages, list and
// tree nodes, deques (whose every one takes a map and a block) and variants holding one. A tuple:
// Boost.PFR cannot reflect a struct with a vector of unique_ptrs under Clang (it asks whether the
// vector is copyable, which it claims to be, then fails compiling the copy).
using costly = std::tuple<std::vector<std::unique_ptr<std::optional<std::array<char, 512>>>>,  // pages
                          std::list<std::uint8_t>,                                             // nodes
                          std::vector<std::deque<std::uint8_t>>,                               // blocks
                          std::multiset<std::uint8_t>,                                         // nodes
                          std::vector<std::variant<std::deque<std::uint8_t>, std::uint8_t>>>;

}  // namespace fuzz
