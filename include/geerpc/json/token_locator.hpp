// geerpc: where each token of a JSON text starts, found from what Boost.JSON's parser hands its
// handler: the tape builder's (src/json_tape.cpp) way to give every token the byte it starts at.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string_view>

#include "../config.hpp"
#include "number_text.hpp"

GEERPC_BEGIN_NAMESPACE
namespace json {
namespace detail {

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

}  // namespace detail
}  // namespace json
GEERPC_END_NAMESPACE
