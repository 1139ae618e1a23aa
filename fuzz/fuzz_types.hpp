// Types the codec fuzzer decodes into: nested aggregates covering every kind the codec supports.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
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

}  // namespace fuzz
