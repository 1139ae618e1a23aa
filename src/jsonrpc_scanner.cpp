// geerpc: the scanner of a JSON-RPC stream (include/geerpc/json/jsonrpc_scanner.hpp,
// docs/protocol.md section 9), compiled once in geerpc::json.
#include <geerpc/json/jsonrpc_scanner.hpp>
#include <geerpc/json/writer.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <span>
#include <string_view>
#include <system_error>

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {
namespace {

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// A byte that may continue a number's text; the text is judged whole once it ends.
bool continues_number(char c) noexcept {
  return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
}

bool is_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Skips the digits at `at`; returns how many there were.
std::size_t skip_digits(std::string_view text, std::size_t& at) noexcept {
  const std::size_t from = at;
  while (at < text.size() && is_digit(text[at])) ++at;
  return at - from;
}

// The length of the escape at text[at] (the byte after a backslash); 0: no escape JSON has.
std::size_t escape_length(std::string_view text, std::size_t at) noexcept {
  if (at >= text.size()) return 0;
  switch (text[at]) {
    case '"':
    case '\\':
    case '/':
    case 'b':
    case 'f':
    case 'n':
    case 'r':
    case 't':
      return 1;
    case 'u':
      for (std::size_t i = 1; i <= 4; ++i)
        if (at + i >= text.size() || !is_hex(text[at + i])) return 0;
      return 5;
    default:
      return 0;
  }
}

// Whether a number's text, well formed, is past a double's range (8.2 refuses it, as the tape
// does: json/number_text.hpp), which one too close to zero is not (it reads as 0).
bool beyond_double(std::string_view text) noexcept {
  double value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc::result_out_of_range) return false;
  // Out of range either way: past it if the value's magnitude is 1 or more, which its integer
  // digits past leading zeros, or the zeros after the point, and its exponent tell.
  std::size_t at = text.starts_with('-') ? 1 : 0;
  while (at < text.size() && text[at] == '0') ++at;
  long magnitude = 0;
  for (; at < text.size() && is_digit(text[at]); ++at) ++magnitude;
  if (at < text.size() && text[at] == '.' && magnitude == 0)
    for (++at; at < text.size() && text[at] == '0'; ++at) --magnitude;
  const std::size_t e = text.find_first_of("eE");
  long exponent = 0;
  if (e != std::string_view::npos) {
    std::size_t digit = e + 1 + (text[e + 1] == '+' || text[e + 1] == '-' ? 1 : 0);
    for (; digit < text.size() && exponent < 100000; ++digit) exponent = exponent * 10 + (text[digit] - '0');
    if (text[e + 1] == '-') exponent = -exponent;
  }
  return magnitude + exponent > 0;
}

}  // namespace

void append_on_one_line(std::vector<std::byte>& out, std::span<const std::byte> json) {
  const std::size_t at = out.size();
  out.insert(out.end(), json.begin(), json.end());
  std::replace_if(
      out.begin() + static_cast<std::ptrdiff_t>(at), out.end(),
      [](std::byte b) { return b == std::byte{'\n'} || b == std::byte{'\r'}; }, std::byte{' '});
}

// The most digits an exponent may have past its leading zeros: Boost.JSON fails one past 2^31.
constexpr std::size_t max_exponent_digits = 9;

bool is_number_text(std::string_view text) noexcept {
  std::size_t at = 0;
  if (at < text.size() && text[at] == '-') ++at;
  if (at < text.size() && text[at] == '0')
    ++at;
  else if (skip_digits(text, at) == 0)
    return false;
  if (at < text.size() && text[at] == '.' && (++at, skip_digits(text, at) == 0)) return false;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    while (at + 1 < text.size() && text[at] == '0' && is_digit(text[at + 1])) ++at;  // leading zeros
    // An exponent of 10 digits or more is refused by the JSON parser (Boost.JSON's exponent
    // overflow, even where the value would read as 0): not echoed either.
    if (const std::size_t digits = skip_digits(text, at); digits == 0 || digits > max_exponent_digits) return false;
  }
  return at == text.size() && !beyond_double(text);
}

namespace {

// The code unit of the \uXXXX escape whose 'u' is at `at` (escape_length() has checked its digits).
unsigned escaped_unit(std::string_view text, std::size_t at) noexcept {
  unsigned unit = 0;
  for (std::size_t i = 1; i <= 4; ++i) {
    const char c = text[at + i];
    unit = unit * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return unit;
}

// The length of the \u escape at `at` (its 'u') with the one that must pair with it: a high
// surrogate and then a low one (12 bytes with the backslash), or a unit that is no surrogate (6);
// 0 for a surrogate alone, which the JSON parsers (Boost.JSON's, so the peer's too) refuse.
std::size_t unicode_escape_length(std::string_view text, std::size_t at) noexcept {
  const unsigned unit = escaped_unit(text, at);
  if (unit < 0xD800 || unit > 0xDFFF) return 5;
  if (unit > 0xDBFF) return 0;  // a low surrogate first
  if (at + 6 >= text.size() || text[at + 5] != '\\' || text[at + 6] != 'u' || escape_length(text, at + 6) != 5)
    return 0;
  const unsigned low = escaped_unit(text, at + 6);
  return low >= 0xDC00 && low <= 0xDFFF ? 11 : 0;
}

}  // namespace

bool is_string_text(std::string_view text) noexcept {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return false;
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::string_view inside = text.substr(0, text.size() - 1);
  for (std::size_t at = 1; at + 1 < text.size();) {
    std::size_t length = 1;
    if (bytes[at] < 0x20 || bytes[at] == '"') return false;
    if (bytes[at] == '\\') {
      length = 1 + escape_length(inside, at + 1);
      if (length == 6) length = 1 + unicode_escape_length(inside, at + 1);
    } else if (bytes[at] >= 0x80)
      length = utf8_sequence_length(bytes + at, text.size() - 1 - at);
    if (length <= 1 && bytes[at] >= 0x80) return false;  // no UTF-8 sequence
    if (length == 1 && bytes[at] == '\\') return false;  // no escape JSON has
    at += length;
  }
  return true;
}

void value_scanner::reset() noexcept {
  depth_ = 0;
  in_string_ = escaped_ = object_ = id_key_ = false;
  phase_ = phase::other;
  key_matched_ = 0;
  capture_ = capture::none;
  id_size_ = 0;
}

std::size_t value_scanner::scan(std::span<const std::byte> bytes, std::size_t at) noexcept {
  for (; at < bytes.size(); ++at) {
    const auto c = static_cast<char>(bytes[at]);
    if (in_string_) {
      if (escaped_ || c == '\\') {
        escaped_ = !escaped_;
        if (depth_ == 1) string_byte_at_top(c, true);
      } else if (c == '"') {
        in_string_ = false;
        if (depth_ == 1) string_ends_at_top();
      } else if (depth_ == 1) {
        string_byte_at_top(c, false);
      }
      continue;
    }
    if (capture_ == capture::number) {
      if (continues_number(c)) {
        keep(c);
        continue;
      }
      settle();
    }
    if (c == '"') {
      in_string_ = true;
      if (depth_ == 1) string_begins_at_top();
    } else if (c == '{' || c == '[') {
      if (depth_ == 0) {
        object_ = c == '{';
        phase_ = object_ ? phase::key : phase::other;
      } else if (depth_ == 1) {
        byte_at_top(c);
      }
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) return at + 1;
    } else if (depth_ == 1) {
      byte_at_top(c);
    }
  }
  return at;
}

std::string_view value_scanner::id() const noexcept {
  if (capture_ != capture::settled) return {};
  return {id_.data(), id_size_};
}

void value_scanner::string_begins_at_top() noexcept {
  if (phase_ == phase::key) {
    phase_ = phase::in_key;
    key_matched_ = 0;
  } else if (phase_ == phase::value) {
    phase_ = phase::other;
    if (id_key_ && capture_ == capture::none) {
      capture_ = capture::string;
      keep('"');
    }
  }
}

void value_scanner::string_byte_at_top(char c, bool escape) noexcept {
  if (phase_ == phase::in_key) {
    const char lower = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    key_matched_ = !escape && key_matched_ < 2 && lower == "id"[key_matched_] ? key_matched_ + 1 : 3;
  }
  if (capture_ == capture::string) keep(c);
}

void value_scanner::string_ends_at_top() noexcept {
  if (phase_ == phase::in_key) {
    id_key_ = key_matched_ == 2;
    phase_ = phase::colon;
  }
  if (capture_ == capture::string) {
    keep('"');
    settle();
  }
}

void value_scanner::byte_at_top(char c) noexcept {
  if (c == ' ' || c == '\n' || c == '\r' || c == '\t') return;
  if (c == ':') {
    if (phase_ == phase::colon) phase_ = phase::value;
  } else if (c == ',') {
    phase_ = object_ ? phase::key : phase::other;
  } else if (phase_ == phase::value) {
    phase_ = phase::other;
    if (!id_key_ || capture_ != capture::none) return;
    if (c == '-' || is_digit(c)) {
      capture_ = capture::number;
      keep(c);
    } else {
      capture_ = capture::settled;  // null, a boolean, an array or an object: no id to answer
    }
  }
}

void value_scanner::keep(char c) noexcept {
  if (capture_ == capture::settled) return;
  if (id_size_ == id_.size()) {  // too long to echo
    id_size_ = 0;
    capture_ = capture::settled;
    return;
  }
  id_[id_size_++] = c;
}

void value_scanner::settle() noexcept {
  if (capture_ == capture::settled) return;
  const std::string_view text(id_.data(), id_size_);
  if (!(capture_ == capture::number ? is_number_text(text) : is_string_text(text))) id_size_ = 0;
  capture_ = capture::settled;
}

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
