// geerpc: the JSON codec's parse, compiled once in geerpc::json: Boost.JSON's basic_parser drives
// the tape builder, whose calls fill a json::tape (include/geerpc/json/tape.hpp) and refuse what
// docs/protocol.md 8.2 refuses beyond Boost's grammar. Here, and not in a header, so that a program
// compiles Boost's parser once rather than in every source that includes <geerpc/json.hpp>.
#include <geerpc/detail/assert.hpp>
#include <geerpc/detail/integer_cast.hpp>
#include <geerpc/json/tape.hpp>
#include <geerpc/json/token_locator.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <boost/json/basic_parser_impl.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

GEERPC_BEGIN_NAMESPACE
namespace json {

// Reserves room for `needed` elements, doubling, charged: what a vector takes, all of it.
template <class U>
bool tape::grow(std::vector<U>& buffer, std::size_t needed, std::size_t least, std::size_t offset) {
  if (needed <= buffer.capacity()) return true;
  const std::size_t capacity = std::max({needed, 2 * buffer.capacity(), least});
  if (!charge(capacity, sizeof(U), offset)) return false;
  buffer.reserve(capacity);
  return true;
}

bool tape::push(const token& t) {
  if (size_ == (blocks_.size() + 1) * block_size) {
    if (!grow(blocks_, blocks_.size() + 1, 16, t.offset) || !charge(block_size, sizeof(token), t.offset)) return false;
    blocks_.emplace_back(new token[block_size]);
  }
  at(size_++) = t;
  return true;
}

bool tape::append_chars(std::string_view chars, std::size_t offset) {
  if (!grow(chars_, chars_.size() + chars.size(), 256, offset)) return false;
  chars_.insert(chars_.end(), chars.begin(), chars.end());
  return true;
}

namespace detail {
namespace {

constexpr std::uint64_t pack(std::size_t low, std::size_t high) noexcept {
  return geerpc::detail::integer_cast<std::uint64_t>(high) << 32 | geerpc::detail::integer_cast<std::uint64_t>(low);
}

// Boost's reason for a text it refuses, shortened where it says little.
std::string parse_error_reason(const boost::json::error_code& ec) {
  if (ec == boost::json::error::too_deep) return "nested deeper than 64 levels";
  if (ec == boost::json::error::incomplete) return "incomplete JSON";
  return ec.message();
}

}  // namespace

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

bool tape_builder::on_double(double approximate, string_view seen, error_code& ec) {
  const std::size_t at = locator_.number(seen);
  const std::string_view text = locator_.last(at);
  double value = 0;
  if (!read_number(text, approximate, value)) return fail("number out of range", at, ec);
  const bool integral = text.find_first_of(".eE") == std::string_view::npos;
  return add({token_kind::floating, integral, offset_of(at), std::bit_cast<std::uint64_t>(value)}, ec);
}

bool tape_builder::open(token_kind kind, error_code& ec) {
  const std::size_t at = locator_.bracket();
  // Boost refuses the level past max_depth before calling; checked again, as this indexes an array.
  if (depth_ == max_depth) return fail("nested deeper than 64 levels", at, ec);
  open_[depth_++] = static_cast<std::uint32_t>(tape_.size());
  return add({kind, false, offset_of(at), 0}, ec);
}

bool tape_builder::close(token_kind kind, std::size_t count, error_code& ec) {
  GEERPC_ASSERT(depth_ > 0, "a bracket closed that was not open");
  const std::size_t at = locator_.bracket();
  const std::size_t begin = open_[--depth_];
  if (!add({kind, false, offset_of(at), 0}, ec)) return false;
  tape_.at(begin).payload = pack(tape_.size() - 1, count);
  return kind != token_kind::object_end || check_unique_keys(begin, count, ec);
}

bool tape_builder::add_part(string_view part, error_code& ec) {
  if (!in_parts_) {
    in_parts_ = true;
    parts_begin_ = tape_.chars_.size();
  }
  const std::size_t at = locator_.start();
  return tape_.append_chars({part.data(), part.size()}, at) || fail(tape_.memory_reason(), at, ec);
}

// A string without escapes arrives whole, as a view of the text: the token points there. Any other
// is copied into the tape's characters.
bool tape_builder::end_string(token_kind kind, string_view last, error_code& ec) {
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
bool tape_builder::check_unique_keys(std::size_t begin, std::size_t count, error_code& ec) {
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
std::size_t tape_builder::first_repeat_sorted(std::size_t count) {
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

}  // namespace detail

decode_status tape::parse() {
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
