// A struct with a pointer member cannot travel: encoding it must not compile, and the error must
// name the member's type and the struct holding it.
// expect-error: a type cannot be serialized
// expect-error: type_cannot_be_serialized<int ?\*, reading>
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
