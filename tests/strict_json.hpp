// For tests of what the server writes as JSON (the debug page's stats.json): a strict check that a
// text is one JSON value (RFC 8259: no trailing commas, no raw control characters in strings, only
// the escapes JSON has, \u surrogates in pairs) in well-formed UTF-8 (RFC 3629: no overlong forms,
// no surrogates, nothing past U+10FFFF). Written independently of the writer it checks, so a fault
// shared by both cannot hide.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace test {

// Whether `text` is well-formed UTF-8, decoding each sequence to its code point.
inline bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    const std::size_t more = lead >= 0xf8 ? 9 : lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 9;
    if (more == 9 || i + more >= text.size()) return false;  // a stray continuation byte, 0xf8 up, or cut short
    std::uint32_t code = lead & (0x3fu >> more);
    for (std::size_t k = 1; k <= more; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      code = (code << 6) | (c & 0x3fu);
    }
    const std::uint32_t least = more == 1 ? 0x80 : more == 2 ? 0x800 : 0x10000;
    if (code < least || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    i += more + 1;
  }
  return true;
}

// Empty when `text` is exactly one JSON value, with whitespace around it, in well-formed UTF-8;
// otherwise what is wrong and at which byte.
class strict_json {
 public:
  static std::string check(std::string_view text) {
    if (!valid_utf8(text)) return "not well-formed UTF-8";
    strict_json parser(text);
    parser.space();
    if (!parser.value(0)) return parser.why_ + " at byte " + std::to_string(parser.at_);
    parser.space();
    if (parser.at_ != text.size()) return "text after the value at byte " + std::to_string(parser.at_);
    return {};
  }

 private:
  explicit strict_json(std::string_view text) : text_(text) {}

  static constexpr int max_depth = 64;

  bool fail(const char* why) {
    why_ = why;
    return false;
  }
  bool more() const { return at_ < text_.size(); }
  char peek() const { return more() ? text_[at_] : '\0'; }
  void space() {
    while (more() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++at_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return fail("a bad literal");
    at_ += word.size();
    return true;
  }

  bool value(int depth) {
    if (depth > max_depth) return fail("nested too deep");
    switch (peek()) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  bool object(int depth) {
    ++at_;
    space();
    if (peek() == '}') return ++at_, true;
    for (;;) {
      space();
      if (peek() != '"') return fail("an object key that is not a string");
      if (!string()) return false;
      space();
      if (peek() != ':') return fail("no ':' after a key");
      ++at_;
      space();
      if (!value(depth + 1)) return false;
      space();
      if (peek() == '}') return ++at_, true;
      if (peek() != ',') return fail("no ',' or '}' in an object");
      ++at_;
    }
  }

  bool array(int depth) {
    ++at_;
    space();
    if (peek() == ']') return ++at_, true;
    for (;;) {
      space();
      if (!value(depth + 1)) return false;
      space();
      if (peek() == ']') return ++at_, true;
      if (peek() != ',') return fail("no ',' or ']' in an array");
      ++at_;
    }
  }

  bool hex4(std::uint32_t& out) {
    out = 0;
    for (int i = 0; i < 4; ++i, ++at_) {
      const char c = peek();
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return fail("a bad \\u escape");
      out = out * 16 + static_cast<std::uint32_t>(digit);
    }
    return true;
  }

  bool escape() {
    ++at_;  // the backslash
    const char c = peek();
    if (std::string_view("\"\\/bfnrt").find(c) != std::string_view::npos && c != '\0') return ++at_, true;
    if (c != 'u') return fail("an escape JSON does not have");
    ++at_;
    std::uint32_t unit = 0;
    if (!hex4(unit)) return false;
    if (unit >= 0xdc00 && unit <= 0xdfff) return fail("a lone low surrogate escape");
    if (unit < 0xd800 || unit > 0xdbff) return true;
    std::uint32_t low = 0;
    if (text_.substr(at_, 2) != "\\u") return fail("a high surrogate escape without its low one");
    at_ += 2;
    if (!hex4(low)) return false;
    if (low < 0xdc00 || low > 0xdfff) return fail("a high surrogate escape without its low one");
    return true;
  }

  bool string() {
    ++at_;
    for (;;) {
      if (!more()) return fail("an unterminated string");
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') return ++at_, true;
      if (c < 0x20) return fail("a raw control character in a string");
      if (c == '\\') {
        if (!escape()) return false;
      } else {
        ++at_;
      }
    }
  }

  bool digits() {
    const std::size_t start = at_;
    while (peek() >= '0' && peek() <= '9') ++at_;
    return at_ > start;
  }

  bool number() {
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (!digits()) {
      return fail("not a value");
    }
    if (peek() == '.') {
      ++at_;
      if (!digits()) return fail("no digits after '.'");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!digits()) return fail("no digits in an exponent");
    }
    return true;
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::string why_;
};

}  // namespace test
