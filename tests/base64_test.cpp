// base64 (detail/base64.hpp), which etcd's gateway and the JSON codec's bytes use: every byte and
// length both ways, and only the canonical padded text of some bytes is read.
#include <string>
#include <string_view>

#include <geerpc/detail/base64.hpp>

#include "catch.hpp"

namespace base64_test {

TEST_CASE("base64 round-trips every byte and length, and refuses what is not base64", "[codec]") {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (std::size_t n = 0; n <= bytes.size(); ++n) {
    const auto text = geerpc::detail::base64_encode(std::string_view(bytes).substr(0, n));
    REQUIRE(text.size() == (n + 2) / 3 * 4);
    REQUIRE(geerpc::detail::base64_decode(text) == bytes.substr(0, n));
  }
  CHECK(geerpc::detail::base64_encode("foo") == "Zm9v");
  CHECK(geerpc::detail::base64_encode("fo") == "Zm8=");
  CHECK(geerpc::detail::base64_encode("f") == "Zg==");
  for (const char* bad : {"Zm9", "Zm9v!", "Z=9v", "Zm=v", "====", "Zg=\n", "Zm9v Zg=="})
    CHECK_FALSE(geerpc::detail::base64_decode(bad).has_value());
}

TEST_CASE("base64 refuses a padded group whose spare bits are not zero: one text per bytes", "[codec]") {
  CHECK(geerpc::detail::base64_decode("QQ==") == std::string("A"));
  CHECK(geerpc::detail::base64_decode("Zm8=") == std::string("fo"));
  for (const char* other : {"QR==", "QX==", "Zh==", "Zm9=", "Zm/="})
    CHECK_FALSE(geerpc::detail::base64_decode(other).has_value());
}

}  // namespace base64_test
