// What the codec tests share: bytes written out by hand, and a value's encoding as bytes.
#pragma once

#include <cstddef>
#include <geerpc/codec/binary.hpp>
#include <initializer_list>
#include <vector>

namespace test {

using byte_vector = std::vector<std::byte>;

// {0x2a, 0, 0, 0} as bytes.
inline byte_vector bytes_of(std::initializer_list<int> values) {
  byte_vector out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

// What binary_codec writes for `value`.
template <class T>
byte_vector encode(const T& value) {
  byte_vector out;
  geerpc::binary_codec::encode(value, out);
  return out;
}

}  // namespace test
