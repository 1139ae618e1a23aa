// A struct with a pointer member cannot travel: encoding it must not compile, and the error must
// name the struct, the member's position (from 1) and its type, and say what to hold instead.
// expect-error: a struct with a raw pointer member cannot be serialized: hold the value itself
// expect-error: member_of<reading, 1, int ?\*>::is_a_raw_pointer
// With GEERPC_CONTROL defined the offending line is corrected, and the file must compile.
#include <cstddef>
#include <geerpc/codec/binary.hpp>
#include <vector>

struct reading {
#ifdef GEERPC_CONTROL
  int sensor;
#else
  int* sensor;
#endif
  double value;
};

int main() {
  std::vector<std::byte> out;
  geerpc::binary_codec::encode(reading{{}, 1.5}, out);
}
