// geerpc: compile-time service declarations.
//
//   using FooApi = geerpc::service<"Foo",
//       geerpc::method<"Sum", &Foo::sum>,                       // member function
//       geerpc::method<"Add", [](int a, int b) { return a + b; }>, // or a captureless lambda, or &free_fn
//       geerpc::method<"Ping", [] { return 1; }>>;             // of any number of arguments
//
// Names are template arguments, so a duplicate or malformed name, a handler of the wrong shape or a
// typed stub call with the wrong argument type is a compile error, not a runtime surprise.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "call_context.hpp"
#include "config.hpp"
#include "fixed_string.hpp"
#include "responder.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

template <class>
inline constexpr bool always_false = false;

// The parts of a callable's signature: its owner class (void for free functions and lambdas), its
// result and its parameters.
template <class F>
struct callable_signature {
  static constexpr bool is_callable = false;
};
template <class R, class... A>
struct callable_signature<R (*)(A...)> {
  static constexpr bool is_callable = true;
  using owner = void;
  using result = R;
  using params = std::tuple<A...>;
};
template <class R, class... A>
struct callable_signature<R (*)(A...) noexcept> : callable_signature<R (*)(A...)> {};
template <class C, class R, class... A>
struct callable_signature<R (C::*)(A...)> {
  static constexpr bool is_callable = true;
  using owner = C;
  using result = R;
  using params = std::tuple<A...>;
};
template <class C, class R, class... A>
struct callable_signature<R (C::*)(A...) const> : callable_signature<R (C::*)(A...)> {};
template <class C, class R, class... A>
struct callable_signature<R (C::*)(A...) noexcept> : callable_signature<R (C::*)(A...)> {};
template <class C, class R, class... A>
struct callable_signature<R (C::*)(A...) const noexcept> : callable_signature<R (C::*)(A...)> {};

// A captureless lambda (or any empty function object) is called as itself: it has no owner.
template <class F>
requires(std::is_class_v<F>&& requires { &F::operator(); }) struct callable_signature<F> {
 private:
  using call_operator = callable_signature<decltype(&F::operator())>;

 public:
  static constexpr bool is_callable = call_operator::is_callable;
  using owner = void;
  using result = typename call_operator::result;
  using params = typename call_operator::params;
};

// `const A&` or `A`: the two ways a handler may take its argument.
template <class P>
inline constexpr bool is_argument_param = (std::is_lvalue_reference_v<P> &&
                                           std::is_const_v<std::remove_reference_t<P>>) ||
                                          (std::is_object_v<P> && !std::is_const_v<P>);

template <class P>
inline constexpr bool is_stop_token_param =
    std::is_same_v<P, std::stop_token> || std::is_same_v<P, const std::stop_token&>;
template <class P>
inline constexpr bool is_context_param = std::is_same_v<P, const call_context&>;
template <class P>
struct responder_param {
  static constexpr bool value = false;
};
template <class R>
struct responder_param<responder<R>> {
  static constexpr bool value = true;
  using result = R;
};

// What the server passes besides the arguments, a handler's last parameters, each at most once and
// in any order: a std::stop_token, a `const geerpc::call_context&`, a `geerpc::responder<R>`.
namespace extra {
inline constexpr int none = 0, stop_token = 1, context = 2, responder = 3;
}
template <class P>
inline constexpr int extra_kind = is_stop_token_param<P>      ? extra::stop_token
                                  : is_context_param<P>       ? extra::context
                                  : responder_param<P>::value ? extra::responder
                                                              : extra::none;
template <class P>
inline constexpr bool is_extra_param = extra_kind<P> != extra::none;

// What an argument is decoded into: itself, except that a std::string_view parameter views a
// std::string and a std::span<const T> a std::vector<T>, which live for the handler's call.
template <class P>
struct argument_storage {
  using type = P;
};
template <>
struct argument_storage<std::string_view> {
  using type = std::string;
};
template <class T>
struct argument_storage<std::span<const T>> {
  using type = std::vector<T>;
};
template <class P>
using argument_storage_t = typename argument_storage<std::remove_cvref_t<P>>::type;

// A handler's parameters: its arguments, each `const A&` or `A`, then optionally a std::stop_token
// and a `const geerpc::call_context&`, in either order.
template <class Params, class Indices>
struct leading_arguments;
template <class Params, std::size_t... I>
struct leading_arguments<Params, std::index_sequence<I...>> {
  static constexpr bool valid =
      ((is_argument_param<std::tuple_element_t<I, Params>> &&
        !is_extra_param<std::remove_cvref_t<std::tuple_element_t<I, Params>>> &&
        !std::is_same_v<std::remove_cvref_t<std::tuple_element_t<I, Params>>, call_context>)&&...);
  using types = std::tuple<argument_storage_t<std::tuple_element_t<I, Params>>...>;
};

template <class Params>
struct handler_params;
template <class... P>
struct handler_params<std::tuple<P...>> {
 private:
  static constexpr std::size_t n = sizeof...(P);
  static constexpr std::array<int, n> kinds{extra_kind<P>...};
  // How many of the last parameters are extras, of distinct kinds.
  static constexpr std::size_t extras = [] {
    std::size_t count = 0;
    unsigned seen = 0;
    for (std::size_t i = n; i-- > 0;) {
      const int kind = kinds[i];
      if (kind == extra::none || (seen & (1u << kind)) != 0) break;
      seen |= 1u << kind;
      ++count;
    }
    return count;
  }();
  static constexpr bool has(int kind) {
    for (std::size_t i = n - extras; i < n; ++i)
      if (kinds[i] == kind) return true;
    return false;
  }
  using arguments = leading_arguments<std::tuple<P...>, std::make_index_sequence<n - extras>>;

  template <class... Q>
  struct responder_of {
    using type = void;
  };
  template <class Q, class... Rest>
  struct responder_of<Q, Rest...> {
    using type = std::conditional_t<responder_param<Q>::value, Q, typename responder_of<Rest...>::type>;
  };

 public:
  static constexpr bool valid = arguments::valid;
  static constexpr bool takes_stop_token = has(extra::stop_token);
  static constexpr bool takes_context = has(extra::context);
  static constexpr bool takes_responder = has(extra::responder);
  // The kinds of the extras, in the handler's order.
  static constexpr std::array<int, extras> extra_kinds = [] {
    std::array<int, extras> out{};
    for (std::size_t i = 0; i < extras; ++i) out[i] = kinds[n - extras + i];
    return out;
  }();
  using argument_types = typename arguments::types;
  using responder_type = typename responder_of<P...>::type;  // void: none
};

// What a call carries: one argument travels as itself, any other number as the tuple of them. The
// two encode alike (a tuple is its elements in turn); their fingerprints differ (the schema writes
// a tuple's bounds, docs/protocol.md 4.1), so a call's arguments are given one by one.
template <class Arguments>
struct argument_of {
  using type = Arguments;
};
template <class A>
struct argument_of<std::tuple<A>> {
  using type = A;
};

template <class R>
inline constexpr bool is_result_type = std::is_void_v<R> || (std::is_object_v<R> && !std::is_const_v<R>);

template <class Responder>
struct deferred_result {
  using type = void;
};
template <class R>
struct deferred_result<responder<R>> {
  using type = R;
};

template <auto Handler>
struct handler_traits {
  using signature = callable_signature<decltype(Handler)>;
  static_assert(signature::is_callable,
                "geerpc::method: the handler must be a member function pointer (&Foo::sum), a function "
                "pointer (&sum) or a captureless lambda");
  using params = handler_params<typename signature::params>;
  static_assert(params::valid && is_result_type<typename signature::result>,
                "geerpc::method: a handler must look like `R f(const A1&, A2, ...)`, with any number of "
                "arguments taken by const reference or by value, optionally followed by std::stop_token, "
                "`const geerpc::call_context&` and `geerpc::responder<R>` (R is void or a value type, not a "
                "reference)");
  static_assert(!params::takes_responder || std::is_void_v<typename signature::result>,
                "geerpc::method: a handler that takes a geerpc::responder<R> answers through it and returns void");
  using owner = typename signature::owner;
  using argument_types = typename params::argument_types;
  // What the caller gets: the handler's result, or what its responder answers with.
  using result_type =
      std::conditional_t<params::takes_responder, typename deferred_result<typename params::responder_type>::type,
                         typename signature::result>;
  using responder_type = typename params::responder_type;
  static constexpr bool takes_stop_token = params::takes_stop_token;
  static constexpr bool takes_context = params::takes_context;
  static constexpr bool takes_responder = params::takes_responder;
  static constexpr auto extra_kinds = params::extra_kinds;
};

constexpr bool is_valid_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (c == '.' || c == '\0') return false;
  return true;
}

}  // namespace detail

// One method of a service: its name and its handler.
template <fixed_string Name, auto Handler>
struct method {
  static_assert(detail::is_valid_name(Name.view()),
                "geerpc::method: a method name must be non-empty and contain no '.'");
  using traits = detail::handler_traits<Handler>;
  using owner = typename traits::owner;
  using argument_types = typename traits::argument_types;  // std::tuple of the arguments' types
  using argument_type = typename detail::argument_of<argument_types>::type;
  using result_type = typename traits::result_type;
  static constexpr std::size_t arity = std::tuple_size_v<argument_types>;
  static constexpr auto name = Name;
  static constexpr auto handler = Handler;
  static constexpr bool takes_stop_token = traits::takes_stop_token;
  static constexpr bool takes_context = traits::takes_context;
  static constexpr bool takes_responder = traits::takes_responder;  // a deferred reply (responder.hpp)
  using responder_type = typename traits::responder_type;
  static constexpr auto extra_kinds = traits::extra_kinds;  // what follows the arguments, in order
};

// What a typed client call names: "Service.Method" with its arguments' types (a std::tuple) and
// its result type. client.call<FooApi::fn<"Sum">>(Args{1, 2}) and
// client.call<MathApi::fn<"Add">>(1, 2) check both at compile time.
template <fixed_string FullName, class Arguments, class Result>
struct method_ref {
  static constexpr auto name = FullName;
  using argument_types = Arguments;
  using argument_type = typename detail::argument_of<Arguments>::type;
  using result_type = Result;
  static constexpr std::size_t arity = std::tuple_size_v<Arguments>;
};

template <class T>
inline constexpr bool is_method_ref_v = false;
template <fixed_string N, class A, class R>
inline constexpr bool is_method_ref_v<method_ref<N, A, R>> = true;

namespace detail {
template <class T>
inline constexpr bool is_method_v = false;
template <fixed_string N, auto H>
inline constexpr bool is_method_v<method<N, H>> = true;

// The class the member-function handlers belong to: void when there are none, and a compile error
// when two handlers belong to different classes.
template <class... Owners>
struct common_owner {
  using type = void;
};
template <class First, class... Rest>
struct common_owner<First, Rest...> {
  using rest = typename common_owner<Rest...>::type;
  static_assert(std::is_void_v<First> || std::is_void_v<rest> || std::is_same_v<First, rest>,
                "geerpc::service: all member-function handlers of a service must belong to one class");
  using type = std::conditional_t<std::is_void_v<First>, rest, First>;
};

// The method_ref of method M in service S: a compile error naming the problem when there is none.
template <fixed_string S, fixed_string M, class... Methods>
auto find_method() {
  constexpr std::array<std::string_view, sizeof...(Methods)> names{Methods::name.view()...};
  constexpr std::size_t index = [&] {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == M.view()) return i;
    return names.size();
  }();
  static_assert(index < sizeof...(Methods), "geerpc::service::fn: the service has no method of that name");
  if constexpr (index < sizeof...(Methods)) {
    using m = std::tuple_element_t<index, std::tuple<Methods...>>;
    return method_ref<join_dotted(S, M), typename m::argument_types, typename m::result_type>{};
  } else {
    return method_ref<join_dotted(S, M), std::tuple<>, void>{};
  }
}

template <std::size_t N>
constexpr bool all_distinct(const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j)
      if (names[i] == names[j]) return false;
  return true;
}
}  // namespace detail

template <fixed_string Name, class... Methods>
struct service {
  static_assert((detail::is_method_v<Methods> && ...),
                "geerpc::service: list geerpc::method<\"Name\", handler> entries");
  static_assert(detail::is_valid_name(Name.view()),
                "geerpc::service: a service name must be non-empty and contain no '.'");
  static_assert(sizeof...(Methods) > 0, "geerpc::service: a service needs at least one method");
  static_assert(detail::all_distinct(std::array<std::string_view, sizeof...(Methods)>{Methods::name.view()...}),
                "geerpc::service: two methods have the same name");

  static constexpr auto name = Name;
  using methods = std::tuple<Methods...>;
  using impl_type = typename detail::common_owner<typename Methods::owner...>::type;

 public:
  template <fixed_string M>
  using fn = decltype(detail::find_method<Name, M, Methods...>());
};

GEERPC_END_NAMESPACE
