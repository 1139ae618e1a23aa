// geerpc: the JSON codec's tape: a JSON text parsed whole by Boost.JSON's basic_parser into a flat
// list of tokens (one per value, key and closing bracket), each with the byte of the text where it
// starts, and for an opening bracket the index of its closing one and how many elements or members
// it holds; what the decoder (json/decode.hpp) reads values from. The parse enforces what
// docs/protocol.md 8.2 asks beyond Boost's grammar: at most 64 levels of nesting, no key twice in
// an object, no number beyond a double's range, nothing but whitespace after the value, and every
// byte the tape takes charged against the decode's memory budget before it is taken.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../codec/reader.hpp"
#include "../config.hpp"
#include "../detail/assert.hpp"
#include "../detail/integer_cast.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {

// Arrays and objects nest at most this deep, counted from the text's top (docs/protocol.md 8.2).
inline constexpr std::size_t max_depth = 64;

// Why a decode failed and the byte of the text where it was noticed; empty reason: it did not.
// The reason names the field where it is known: `field "count": expected an integer, got a string`.
struct decode_status {
  std::string reason;
  std::size_t offset = 0;

  explicit operator bool() const noexcept { return reason.empty(); }
  std::string message() const { return reason.empty() ? "ok" : reason + " at byte " + std::to_string(offset); }
};

enum class token_kind : std::uint8_t {
  null,
  boolean,
  int64,     // an integer that fits std::int64_t (all negative ones)
  uint64,    // an integer above std::int64_t's range that fits std::uint64_t
  floating,  // any other number: a fraction, an exponent, or an integer too large for 64 bits
  string,
  key,
  array_begin,
  array_end,
  object_begin,
  object_end,
};

constexpr bool opens(token_kind kind) noexcept {
  return kind == token_kind::array_begin || kind == token_kind::object_begin;
}

// One token, 16 bytes. Offsets and indices are 32-bit: the tape refuses a text of 4 GiB or more.
struct token {
  token_kind kind;
  // A string's or key's characters are the text's own (it had no escapes), not the tape's copy; a
  // floating number was written as an integer (no fraction, no exponent).
  bool flag;
  std::uint32_t offset;   // the byte of the text where the token starts
  std::uint64_t payload;  // the value; a string's place and size; an opening bracket's end and count

  bool boolean() const noexcept { return payload != 0; }
  std::int64_t int64() const noexcept { return static_cast<std::int64_t>(payload); }
  std::uint64_t uint64() const noexcept { return payload; }
  double floating() const noexcept { return std::bit_cast<double>(payload); }
  // An opening bracket's: the index of its closing token, and its elements (members of an object).
  std::size_t end() const noexcept { return static_cast<std::uint32_t>(payload); }
  std::size_t count() const noexcept { return geerpc::detail::integer_cast<std::size_t>(payload >> 32); }
};

namespace detail {

constexpr std::uint64_t pack(std::size_t low, std::size_t high) noexcept {
  return geerpc::detail::integer_cast<std::uint64_t>(high) << 32 | geerpc::detail::integer_cast<std::uint64_t>(low);
}

constexpr const char* short_escape_of(char c) noexcept {
  switch (c) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    default:
      return nullptr;
  }
}

// An untrusted string for an error message: quoted, JSON-escaped as the encoder escapes (and DEL),
// and cut after 40 bytes (at a character's start), with "..." after it when cut.
inline std::string quoted(std::string_view text) {
  constexpr std::size_t most = 40;
  std::size_t size = std::min(text.size(), most);
  while (size < text.size() && size > 0 && (static_cast<unsigned char>(text[size]) & 0xc0) == 0x80) --size;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char c : text.substr(0, size)) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (const char* short_escape = short_escape_of(c); short_escape != nullptr) {
      out += short_escape;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    } else {
      out += c;
    }
  }
  out += '"';
  if (size < text.size()) out += "...";
  return out;
}

// The reason of a value that would pass its memory limit, as codec::decode_status words it.
inline std::string memory_reason(std::size_t limit, std::size_t text_size) {
  const std::string why = limit == codec::default_memory_limit(text_size)
                              ? "limit: " + std::to_string(codec::memory_per_input_byte) + " x " +
                                    std::to_string(text_size) + " input bytes + " + std::to_string(codec::memory_base)
                              : std::string("limit set by the caller");
  return "decoded value would need more than " + std::to_string(limit) + " bytes of memory (" + why + ")";
}

// A number's text read as F, correctly rounded (Boost 1.81's own doubles may be a unit in the last
// place off, which would break a round trip): false when it is beyond F's range. A value too small
// for F is its zero. `approximate` is Boost's reading: where the library has no floating from_chars,
// it is used as it is; otherwise it tells an overflow from an underflow.
template <class F>
bool read_number(std::string_view text, double approximate, F& out) noexcept {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  F value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    if (std::fabs(approximate) >= 1) return false;
    out = text.starts_with('-') ? -F{0} : F{0};
    return true;
  }
  if (error == std::errc{} && end == text.data() + text.size()) {
    out = value;
    return true;
  }
#else
  (void)text;
#endif
  if (!std::isfinite(approximate) || std::fabs(approximate) > static_cast<double>(std::numeric_limits<F>::max()))
    return false;
  out = static_cast<F>(approximate);
  return true;
}

constexpr bool is_number_char(char c) noexcept {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// Where each token starts. A number, and a string without escapes, are views of the text in
// Boost's calls: their place is where the view points (between a string's quotes). Boost's other
// calls carry no position (brackets, literals) or a buffer of their own (an escaped string's parts);
// but the parser has checked the text up to each call, so a scan from the end of the token before,
// past whitespace, ',' and ':', finds this one's first byte, and its end is its own (a string's
// closing quote, a literal's length). Every step is bounded by the text's end, whatever it holds.
class token_locator {
 public:
  explicit token_locator(std::string_view text) noexcept : text_(text) {}

  std::size_t bracket() noexcept { return take(1); }
  std::size_t literal(std::size_t length) noexcept { return take(length); }
  std::size_t number(std::string_view seen) noexcept {
    if (!seen.empty() && contains(seen)) return place(seen, 0);
    const std::size_t at = start();
    at_ = at;
    while (at_ < text_.size() && is_number_char(text_[at_])) ++at_;
    return at;
  }
  // `unescaped`: the string's characters, when Boost gave them whole as the text's own.
  std::size_t string(std::string_view unescaped) noexcept {
    if (is_quoted(unescaped)) return place(unescaped, 1);
    const std::size_t at = start();
    at_ = at + 1;  // past the opening quote; an escape's backslash takes the character after it
    while (at_ < text_.size() && text_[at_] != '"') at_ += text_[at_] == '\\' ? 2u : 1u;
    at_ = std::min(at_ + 1, text_.size());
    return at;
  }
  // The text of the token located last.
  std::string_view last(std::size_t start) const noexcept { return text_.substr(start, at_ - start); }
  // Where the next token starts (a string, while its parts arrive).
  std::size_t start() noexcept {
    while (at_ < text_.size() && is_separator(text_[at_])) ++at_;
    return at_;
  }
  // Whether `view` lies within the text (std::less_equal: a total order on unrelated pointers).
  bool contains(std::string_view view) const noexcept {
    const std::less_equal<const char*> not_after;
    return view.data() != nullptr && not_after(text_.data(), view.data()) &&
           not_after(view.data() + view.size(), text_.data() + text_.size());
  }

 private:
  std::size_t take(std::size_t length) noexcept {
    const std::size_t at = start();
    at_ = std::min(at + length, text_.size());
    return at;
  }
  // A token of the text's own, `margin` bytes (its quotes) each side of `view`.
  std::size_t place(std::string_view view, std::size_t margin) noexcept {
    const auto at = static_cast<std::size_t>(view.data() - text_.data()) - margin;
    at_ = at + view.size() + 2 * margin;
    return at;
  }
  bool is_quoted(std::string_view view) const noexcept {
    if (!contains(view) || view.data() == text_.data() || view.data() + view.size() == text_.data() + text_.size())
      return false;
    return view.data()[-1] == '"' && view.data()[view.size()] == '"';
  }
  static constexpr bool is_separator(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ':';
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

class tape_builder;

}  // namespace detail

// A JSON text parsed into tokens, and the memory budget of its decode: what the tape takes is
// charged to it, and so is what the values decoded from it take (json/decode.hpp). Tokens are
// kept in blocks of 256, so that the tape never copies itself while growing and never holds more
// than one block it does not use: a vector grown by doubling would take up to 4 times its tokens'
// size, all of it charged, and refuse honest texts. The first block is inside the tape (4 KiB), so
// that a small text allocates nothing. Strings without escapes are views of the text; others are
// copied once, into one buffer.
class tape {
 public:
  tape(std::span<const std::byte> text, std::size_t max_memory) noexcept
      : text_(reinterpret_cast<const char*>(text.data()), text.size()), budget_(text, max_memory) {}
  explicit tape(std::span<const std::byte> text) noexcept : tape(text, codec::default_memory_limit(text.size())) {}
  tape(const tape&) = delete;
  tape& operator=(const tape&) = delete;

  // Parses the text, once; the tape is empty again after a failure.
  decode_status parse();

  std::size_t size() const noexcept { return size_; }
  const token& operator[](std::size_t index) const noexcept {
    GEERPC_ASSERT(index < size_, "a tape read past its last token");
    return index < block_size ? first_[index] : blocks_[index / block_size - 1][index % block_size];
  }
  // A string's or key's characters.
  std::string_view chars(const token& t) const noexcept {
    GEERPC_ASSERT(t.kind == token_kind::string || t.kind == token_kind::key, "chars of a token that has none");
    const auto begin = static_cast<std::size_t>(static_cast<std::uint32_t>(t.payload));
    const std::string_view from = t.flag ? text_ : std::string_view(chars_.data(), chars_.size());
    return from.substr(begin, t.count());
  }
  // A number's text, as it was written.
  std::string_view number_text(const token& t) const noexcept {
    std::size_t end = t.offset;
    while (end < text_.size() && detail::is_number_char(text_[end])) ++end;
    return text_.substr(t.offset, end - t.offset);
  }
  std::span<const std::byte> text() const noexcept { return std::as_bytes(std::span(text_.data(), text_.size())); }

  // The decode's memory budget (a codec::reader over the text, used for its charges only).
  codec::reader& budget() noexcept { return budget_; }
  // Charges `bytes` for the value at `offset`; false, with the budget failed, when it cannot pay.
  bool charge(std::size_t bytes, std::size_t offset) noexcept {
    return budget_.charge(bytes, reinterpret_cast<const std::byte*>(text_.data()) + offset);
  }
  bool charge(std::size_t count, std::size_t each, std::size_t offset) noexcept {
    return budget_.charge(count, each, reinterpret_cast<const std::byte*>(text_.data()) + offset);
  }
  std::string memory_reason() const { return detail::memory_reason(budget_.memory_limit(), text_.size()); }

 private:
  friend class detail::tape_builder;
  static constexpr std::size_t block_size = 256;

  token& at(std::size_t index) noexcept {
    return index < block_size ? first_[index] : blocks_[index / block_size - 1][index % block_size];
  }
  bool push(const token& t);
  bool append_chars(std::string_view chars, std::size_t offset);
  template <class U>
  bool grow(std::vector<U>& buffer, std::size_t needed, std::size_t least, std::size_t offset);

  std::string_view text_;
  codec::reader budget_;
  std::array<token, block_size> first_;
  std::vector<std::unique_ptr<token[]>> blocks_;  // the blocks after the first
  std::size_t size_ = 0;
  std::vector<char> chars_;               // the characters of strings that had escapes
  std::vector<std::uint32_t> key_order_;  // a large object's keys, sorted to find a repeat
};

// Reserves room for `needed` elements, doubling, charged: what a vector takes, all of it.
template <class U>
bool tape::grow(std::vector<U>& buffer, std::size_t needed, std::size_t least, std::size_t offset) {
  if (needed <= buffer.capacity()) return true;
  const std::size_t capacity = std::max({needed, 2 * buffer.capacity(), least});
  if (!charge(capacity, sizeof(U), offset)) return false;
  buffer.reserve(capacity);
  return true;
}

inline bool tape::push(const token& t) {
  if (size_ == (blocks_.size() + 1) * block_size) {
    if (!grow(blocks_, blocks_.size() + 1, 16, t.offset) || !charge(block_size, sizeof(token), t.offset)) return false;
    blocks_.emplace_back(new token[block_size]);
  }
  at(size_++) = t;
  return true;
}

inline bool tape::append_chars(std::string_view chars, std::size_t offset) {
  if (!grow(chars_, chars_.size() + chars.size(), 256, offset)) return false;
  chars_.insert(chars_.end(), chars.begin(), chars.end());
  return true;
}

namespace detail {

// Boost.JSON's handler: each call appends a token (or a string's part) to the tape. A call that
// refuses the text records why and where, and returns false, which stops the parse.
class tape_builder {
  using error_code = boost::json::error_code;
  using string_view = boost::json::string_view;

 public:
  static constexpr std::size_t max_array_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_object_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_string_size = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t max_key_size = std::numeric_limits<std::size_t>::max();

  explicit tape_builder(tape& out) noexcept : tape_(out), locator_(out.text_) {}

  bool failed() const noexcept { return !reason_.empty(); }
  std::string take_reason() noexcept { return std::move(reason_); }
  std::size_t offset() const noexcept { return offset_; }

  bool on_document_begin(error_code&) noexcept { return true; }
  bool on_document_end(error_code&) noexcept { return true; }
  bool on_array_begin(error_code& ec) { return open(token_kind::array_begin, ec); }
  bool on_array_end(std::size_t count, error_code& ec) { return close(token_kind::array_end, count, ec); }
  bool on_object_begin(error_code& ec) { return open(token_kind::object_begin, ec); }
  bool on_object_end(std::size_t count, error_code& ec) { return close(token_kind::object_end, count, ec); }
  bool on_string_part(string_view part, std::size_t, error_code& ec) { return add_part(part, ec); }
  bool on_string(string_view last, std::size_t, error_code& ec) { return end_string(token_kind::string, last, ec); }
  bool on_key_part(string_view part, std::size_t, error_code& ec) { return add_part(part, ec); }
  bool on_key(string_view last, std::size_t, error_code& ec) { return end_string(token_kind::key, last, ec); }
  bool on_number_part(string_view, error_code&) noexcept { return true; }
  bool on_int64(std::int64_t value, string_view seen, error_code& ec) {
    return add({token_kind::int64, false, offset_of(locator_.number(seen)), static_cast<std::uint64_t>(value)}, ec);
  }
  bool on_uint64(std::uint64_t value, string_view seen, error_code& ec) {
    return add({token_kind::uint64, false, offset_of(locator_.number(seen)), value}, ec);
  }
  bool on_double(double approximate, string_view seen, error_code& ec);
  bool on_bool(bool value, error_code& ec) {
    return add({token_kind::boolean, false, offset_of(locator_.literal(value ? 4 : 5)), value ? 1u : 0u}, ec);
  }
  bool on_null(error_code& ec) { return add({token_kind::null, false, offset_of(locator_.literal(4)), 0}, ec); }
  bool on_comment_part(string_view, error_code&) noexcept { return true; }  // comments are refused
  bool on_comment(string_view, error_code&) noexcept { return true; }

 private:
  static std::uint32_t offset_of(std::size_t offset) noexcept { return static_cast<std::uint32_t>(offset); }

  bool fail(std::string reason, std::size_t offset, error_code& ec) {
    reason_ = std::move(reason);
    offset_ = offset;
    ec = boost::json::error::exception;
    return false;
  }
  bool add(const token& t, error_code& ec) { return tape_.push(t) || fail(tape_.memory_reason(), t.offset, ec); }
  bool open(token_kind kind, error_code& ec);
  bool close(token_kind kind, std::size_t count, error_code& ec);
  bool add_part(string_view part, error_code& ec);
  bool end_string(token_kind kind, string_view last, error_code& ec);
  bool check_unique_keys(std::size_t begin, std::size_t count, error_code& ec);
  std::size_t first_repeat_sorted(std::size_t count);
  bool key_repeats(std::size_t key, std::size_t earlier_key) const noexcept {
    return tape_.chars(tape_[key]) == tape_.chars(tape_[earlier_key]);
  }

  tape& tape_;
  token_locator locator_;
  std::array<std::uint32_t, max_depth> open_{};  // the indices of the brackets open, outermost first
  std::size_t depth_ = 0;
  std::size_t parts_begin_ = 0;  // where the string whose parts are arriving starts in the tape's chars
  bool in_parts_ = false;
  std::string reason_;
  std::size_t offset_ = 0;
};

inline bool tape_builder::on_double(double approximate, string_view seen, error_code& ec) {
  const std::size_t at = locator_.number(seen);
  const std::string_view text = locator_.last(at);
  double value = 0;
  if (!read_number(text, approximate, value)) return fail("number out of range", at, ec);
  const bool integral = text.find_first_of(".eE") == std::string_view::npos;
  return add({token_kind::floating, integral, offset_of(at), std::bit_cast<std::uint64_t>(value)}, ec);
}

inline bool tape_builder::open(token_kind kind, error_code& ec) {
  const std::size_t at = locator_.bracket();
  // Boost refuses the level past max_depth before calling; checked again, as this indexes an array.
  if (depth_ == max_depth) return fail("nested deeper than 64 levels", at, ec);
  open_[depth_++] = static_cast<std::uint32_t>(tape_.size());
  return add({kind, false, offset_of(at), 0}, ec);
}

inline bool tape_builder::close(token_kind kind, std::size_t count, error_code& ec) {
  GEERPC_ASSERT(depth_ > 0, "a bracket closed that was not open");
  const std::size_t at = locator_.bracket();
  const std::size_t begin = open_[--depth_];
  if (!add({kind, false, offset_of(at), 0}, ec)) return false;
  tape_.at(begin).payload = pack(tape_.size() - 1, count);
  return kind != token_kind::object_end || check_unique_keys(begin, count, ec);
}

inline bool tape_builder::add_part(string_view part, error_code& ec) {
  if (!in_parts_) {
    in_parts_ = true;
    parts_begin_ = tape_.chars_.size();
  }
  const std::size_t at = locator_.start();
  return tape_.append_chars({part.data(), part.size()}, at) || fail(tape_.memory_reason(), at, ec);
}

// A string without escapes arrives whole, as a view of the text: the token points there. Any other
// is copied into the tape's characters.
inline bool tape_builder::end_string(token_kind kind, string_view last, error_code& ec) {
  const std::string_view chars(last.data(), last.size());
  const bool in_text = !in_parts_ && locator_.contains(chars);
  const std::size_t at = locator_.string(in_text ? chars : std::string_view());
  std::size_t begin = in_parts_ ? parts_begin_ : tape_.chars_.size();
  if (in_text)
    begin = static_cast<std::size_t>(chars.data() - tape_.text_.data());
  else if (!tape_.append_chars(chars, at))
    return fail(tape_.memory_reason(), at, ec);
  const std::size_t size = in_text ? last.size() : tape_.chars_.size() - begin;
  in_parts_ = false;
  return add({kind, in_text, offset_of(at), pack(begin, size)}, ec);
}

// No key twice in one object (docs/protocol.md 8.2): readers that disagree on which of two wins
// are a known way to smuggle a value past a check. A small object's keys are compared pairwise; a
// large one's sorted. The error names the first key, in the text's order, that repeats an earlier.
inline bool tape_builder::check_unique_keys(std::size_t begin, std::size_t count, error_code& ec) {
  constexpr std::size_t pairwise_most = 16;
  if (count < 2) return true;
  if (count > pairwise_most) {
    if (!tape_.grow(tape_.key_order_, count, count, tape_[begin].offset))
      return fail(tape_.memory_reason(), tape_[begin].offset, ec);
  }
  std::array<std::uint32_t, pairwise_most> small{};
  std::uint32_t* keys =
      count > pairwise_most ? (tape_.key_order_.resize(count), tape_.key_order_.data()) : small.data();
  for (std::size_t i = 0, key = begin + 1; i < count; ++i) {
    keys[i] = static_cast<std::uint32_t>(key);
    const token& value = tape_[key + 1];
    key = opens(value.kind) ? value.end() + 1 : key + 2;
  }
  std::size_t repeat = 0;  // a key's index; 0 (the tape's first token, never a key): none
  if (count > pairwise_most) {
    repeat = first_repeat_sorted(count);
  } else {
    for (std::size_t i = 1; i < count && repeat == 0; ++i)
      for (std::size_t j = 0; j < i && repeat == 0; ++j)
        if (key_repeats(keys[i], keys[j])) repeat = keys[i];
  }
  if (repeat == 0) return true;
  return fail("duplicate key " + quoted(tape_.chars(tape_[repeat])), tape_[repeat].offset, ec);
}

// The earliest key, in the text's order, whose characters an earlier key has: sorted by characters
// then position, the second of each run of equal keys is a candidate.
inline std::size_t tape_builder::first_repeat_sorted(std::size_t count) {
  std::vector<std::uint32_t>& keys = tape_.key_order_;
  std::sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(count), [&](std::uint32_t a, std::uint32_t b) {
    const std::string_view left = tape_.chars(tape_[a]), right = tape_.chars(tape_[b]);
    return left != right ? left < right : a < b;
  });
  std::size_t repeat = 0;
  for (std::size_t i = 1; i < count; ++i)
    if (key_repeats(keys[i], keys[i - 1]) && (i < 2 || !key_repeats(keys[i - 1], keys[i - 2])))
      repeat = repeat == 0 ? keys[i] : std::min<std::size_t>(repeat, keys[i]);
  return repeat;
}

// Boost's reason for a text it refuses, shortened where it says little.
inline std::string parse_error_reason(const boost::json::error_code& ec) {
  if (ec == boost::json::error::too_deep) return "nested deeper than 64 levels";
  if (ec == boost::json::error::incomplete) return "incomplete JSON";
  return ec.message();
}

}  // namespace detail

inline decode_status tape::parse() {
  GEERPC_ASSERT(size_ == 0, "a tape parsed twice");
  if (text_.size() >= std::numeric_limits<std::uint32_t>::max()) return {"JSON text of 4 GiB or more", 0};
  boost::json::parse_options options;  // RFC 8259 and nothing more: no comments, no trailing commas
  options.max_depth = max_depth;
  boost::json::basic_parser<detail::tape_builder> parser(options, *this);
  boost::json::error_code ec;
  const std::size_t used = parser.write_some(false, text_.data(), text_.size(), ec);
  decode_status status;
  if (parser.handler().failed())
    status = {parser.handler().take_reason(), parser.handler().offset()};
  else if (ec)
    status = {detail::parse_error_reason(ec), used};
  else if (used != text_.size())
    status = {"extra data after the value", used};
  if (!status) size_ = 0;
  return status;
}

}  // namespace json
GEERPC_END_NAMESPACE
