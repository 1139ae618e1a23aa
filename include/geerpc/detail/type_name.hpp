// geerpc: a type's name as the compiler spells it, tidied for people ("std::string", not
// "std::__cxx11::basic_string<char>"): what the debug page shows of a method's argument and reply.
//
// A class template's name is put together from its template's name and its arguments' names, each
// asked of the compiler on its own, leaving out the arguments that are the template's defaults. The
// compiler's spelling of the whole type can name each default argument in full (GCC writes
// std::vector<X, std::allocator<X>>), so its length doubles with each level of nesting: 2 MB for a
// vector nested 16 deep. Put together, a name grows with the number of types written in it.
//
// The recursion goes through class templates (type_name_of<T>::get), not function templates: Clang
// 14 spends time exponential in the nesting depth on each function template specialisation of a
// nested type (a vector nested 24 deep: 0.5 s through classes, seconds through functions, 32 deep
// did not finish), apparently walking the type's written form, whose default arguments repeat it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The text after "<Parameter> = " in a function's __PRETTY_FUNCTION__, to the end of that
// parameter's value. GCC: "... [with T = Args; std::string_view = ...]"; Clang: "... [T = Args]".
constexpr std::string_view pretty_parameter(std::string_view text, std::string_view parameter) noexcept {
  std::size_t from = text.find(parameter);
  if (from == std::string_view::npos) return "?";
  from += parameter.size();
  int depth = 0;
  std::size_t end = from;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if ((c == '>' || c == ')') && depth > 0) --depth;
    if (c == ']' && depth-- == 0) break;
    if (c == ';' && depth == 0) break;
  }
  return text.substr(from, end - from);
}

template <class T>
std::string_view raw_type_name() noexcept {
  return pretty_parameter(__PRETTY_FUNCTION__, "T = ");
}
template <template <class...> class Template>
std::string_view raw_template_name() noexcept {
  return pretty_parameter(__PRETTY_FUNCTION__, "Template = ");
}
template <template <class, std::size_t> class Template>
std::string_view raw_sized_template_name() noexcept {
  return pretty_parameter(__PRETTY_FUNCTION__, "Template = ");
}

// One pass over `raw`: libstdc++'s inline namespace dropped, "> >" closed up, std::string and
// std::string_view by those names.
inline std::string tidy_type_name(std::string_view raw) {
  constexpr std::string_view replaced[][2] = {{"std::__cxx11::basic_string<char>", "std::string"},
                                              {"std::__cxx11::", "std::"},
                                              {"std::basic_string<char>", "std::string"},
                                              {"std::basic_string_view<char>", "std::string_view"},
                                              {" >", ">"}};
  std::string out;
  out.reserve(raw.size());
  for (std::size_t at = 0; at < raw.size();) {
    bool matched = false;
    for (const auto& [what, with] : replaced) {
      if (raw.substr(at, what.size()) != what) continue;
      out += with;
      at += what.size();
      matched = true;
      break;
    }
    if (!matched) out += raw[at++];
  }
  return out;
}

template <class T>
struct type_name_of;

template <class T>
std::string type_name() {
  return type_name_of<T>::get();
}

// A leaf: the compiler's own spelling, tidied (short, as it names no nested defaults).
template <class T>
struct type_name_of {
  static std::string get() { return tidy_type_name(raw_type_name<T>()); }
};
template <class T>
struct type_name_of<const T> {
  static std::string get() { return "const " + type_name_of<T>::get(); }
};
template <class T>
struct type_name_of<T&> {
  static std::string get() { return type_name_of<T>::get() + "&"; }
};
template <class T>
struct type_name_of<T&&> {
  static std::string get() { return type_name_of<T>::get() + "&&"; }
};
template <>
struct type_name_of<std::string> {
  static std::string get() { return "std::string"; }
};
template <>
struct type_name_of<std::string_view> {
  static std::string get() { return "std::string_view"; }
};

template <class... T>
struct type_list {};

// Whether Template<Arguments...> is a valid name of T.
template <template <class...> class Template, class T, class Arguments, class = void>
struct template_names : std::false_type {};
template <template <class...> class Template, class T, class... Arguments>
struct template_names<Template, T, type_list<Arguments...>, std::void_t<Template<Arguments...>>>
    : std::is_same<Template<Arguments...>, T> {};

// The arguments of T = Template<...> as written: Taken... and as few of the Rest as name T (the
// others are the template's defaults), as a type_list.
template <template <class...> class Template, class T, class Taken, class Rest>
struct explicit_arguments {
  using type = Taken;
};
template <template <class...> class Template, class T, class... Taken, class Next, class... Rest>
struct explicit_arguments<Template, T, type_list<Taken...>, type_list<Next, Rest...>> {
  static auto pick() {
    if constexpr (template_names<Template, T, type_list<Taken...>>::value)
      return type_list<Taken...>{};
    else
      return typename explicit_arguments<Template, T, type_list<Taken..., Next>, type_list<Rest...>>::type{};
  }
  using type = decltype(pick());
};

// "A, B, C" of a type_list.
template <class List>
struct type_names;
template <class... T>
struct type_names<type_list<T...>> {
  static std::string get() {
    std::string out;
    ((out += out.empty() ? "" : ", ", out += type_name_of<T>::get()), ...);
    return out;
  }
};

template <template <class...> class Template, class... Arguments>
struct type_name_of<Template<Arguments...>> {
  static std::string get() {
    using shown =
        typename explicit_arguments<Template, Template<Arguments...>, type_list<>, type_list<Arguments...>>::type;
    return tidy_type_name(raw_template_name<Template>()) + "<" + type_names<shown>::get() + ">";
  }
};

// std::array<T, N>, std::span<T, N>; a span's default N, dynamic_extent (the largest size_t), is
// left out as the compiler leaves it out.
template <template <class, std::size_t> class Template, class Element, std::size_t N>
struct type_name_of<Template<Element, N>> {
  static std::string get() {
    std::string out = tidy_type_name(raw_sized_template_name<Template>()) + "<" + type_name_of<Element>::get();
    if (N != static_cast<std::size_t>(-1)) out += ", " + std::to_string(N);
    return out + ">";
  }
};

}  // namespace detail
GEERPC_END_NAMESPACE
