// What the JSON encoder's tests share (encode_test.cpp, encode_forms_test.cpp): the text a value
// encodes to, the message of the encode_error it throws, and two types both files write.
#pragma once

#include <cstddef>
#include <geerpc/json/encode.hpp>
#include <string>
#include <vector>

namespace json_encode_test {

using geerpc::json::encode_error;

enum class flag : bool { off, on };

struct named {
  int id;
  std::string name;
};

template <class T>
std::string json_of(const T& value) {
  std::vector<std::byte> out;
  geerpc::json::encode(value, out);
  return std::string(reinterpret_cast<const char*>(out.data()), out.size());
}

// The message of the encode_error that encoding `value` throws ("" when none is thrown).
template <class T>
std::string error_of(const T& value) {
  try {
    (void)json_of(value);
  } catch (const encode_error& error) {
    return error.what();
  }
  return "";
}

}  // namespace json_encode_test
