// Fuzzes what a server does with a peer's call schema (docs/protocol.md 4.1): its fingerprint pass,
// its parse and its comparison with a handler's own, both ways. Nothing may crash, hang, read out
// of bounds or recurse past the depth limit, and a refusal's reason must be printable ASCII.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <geerpc/codec/schema.hpp>
#include <geerpc/codec/schema_compare.hpp>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

namespace {

struct item {
  std::string name;
  std::int32_t quantity;
};
struct order {
  std::string customer;
  std::vector<item> items;
  std::map<std::string, std::optional<double>> notes;
  std::variant<std::int64_t, std::string> ref;
};

void check_printable(const std::string& text) {
  for (const char c : text)
    if (c < 0x20 || c > 0x7e) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view theirs(reinterpret_cast<const char*>(data), size);
  (void)geerpc::codec::schema_fingerprint(theirs);
  static const std::string& mine = geerpc::codec::call_schema<std::tuple<order, std::int32_t>, item>();
  const geerpc::codec::schema_verdict forward = geerpc::codec::compare_call_schemas(mine, theirs);
  const geerpc::codec::schema_verdict backward = geerpc::codec::compare_call_schemas(theirs, mine);
  if (forward.compatible != backward.compatible) std::abort();  // agreement is symmetric
  check_printable(forward.why);
  check_printable(backward.why);
  if (!forward.compatible && forward.why.empty()) std::abort();
  return 0;
}
