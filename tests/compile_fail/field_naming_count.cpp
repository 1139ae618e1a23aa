// A type's own field names must be one per field: one name too few would shift every field after it.
// expect-error: one name per field of T, no more, no fewer
// own-control: a specialisation of geerpc::codec::field_naming cannot be declared inside the
// namespace the batched controls put each case in.
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <array>
#include <geerpc/codec/field_names.hpp>
#include <string_view>

struct point {
  int x;
  int y;
};

template <>
struct geerpc::codec::field_naming<point> {
#ifdef GEERPC_CONTROL
  static constexpr std::array<std::string_view, 2> names{"X", "Y"};
#else
  static constexpr std::array<std::string_view, 1> names{"X"};
#endif
};

static_assert(geerpc::codec::field_names<point>().size() == 2);
