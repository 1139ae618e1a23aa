// geerpc: the one call surface that basic_client and basic_balanced_client share. Three verbs, each
// by name or through a typed stub, each with an optional leading context:
//
//   R                  client.call<R>([ctx,] "Service.Method", arguments...)    by name
//   result<R>          client.try_call<R>(...)                                  no exceptions
//   call_future<R>     client.async_call<R>(...)                                threaded transport
//   Fn::result_type    client.call<Api::fn<"Method">>([ctx,] arguments...)     typed stub, checked
//
// A client derives from call_surface<Itself, Transport, Codec> and gives it (a friend) two
// primitives, both by name, with a context, the arguments encoded as they are given:
//
//   result<R> invoke<R>(const context&, std::string_view method, const A&... arguments);
//   call_future<R, Codec, Transport> start<R>(const context&, std::string_view method, const A&...);
//
// Everything here is forwarding the compiler inlines: the context split off (a default one made
// when none leads), a typed stub's arguments checked and each seen as its declared type. And one
// rule: a call made on a handler's thread inherits that handler's context (context.hpp), merged
// here, in by_name(), the one funnel every call passes; elsewhere that costs one thread-local load.
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../call_context.hpp"
#include "../config.hpp"
#include "../context.hpp"
#include "../error.hpp"
#include "../service.hpp"
#include "call_future.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// True when no argument is a context.
template <class... A>
inline constexpr bool not_context = (!std::is_same_v<std::remove_cvref_t<A>, context> && ...);

// Whether a call's first argument is its context.
template <class... A>
inline constexpr bool leads_with_context = false;
template <class First, class... Rest>
inline constexpr bool leads_with_context<First, Rest...> = std::is_same_v<std::remove_cvref_t<First>, context>;

// What a call of T yields: T for a call by name, the method's result for a typed stub.
template <class T>
struct reply_of {
  using type = T;
};
template <class T>
requires is_method_ref_v<T>
struct reply_of<T> {
  using type = typename T::result_type;
};
template <class T>
using reply_t = typename reply_of<T>::type;

// What an argument declared as D may be given as, besides a D: a std::string as anything that
// views as a std::string_view, a std::vector<T> as anything that views as a std::span<const T>.
// Those are encoded as the view, exactly as the D would be, without a copy.
template <class D>
struct argument_view {
  using type = void;
};
template <class Traits, class Alloc>
struct argument_view<std::basic_string<char, Traits, Alloc>> {
  using type = std::string_view;
};
template <class T, class Alloc>
struct argument_view<std::vector<T, Alloc>> {
  using type = std::conditional_t<std::is_same_v<T, bool>, void, std::span<const T>>;
};

template <class D, class A>
inline constexpr bool argument_fits = [] {
  using view = typename argument_view<D>::type;
  if constexpr (std::is_void_v<view>)
    return std::is_convertible_v<const A&, D>;
  else
    return std::is_convertible_v<const A&, D> || std::is_convertible_v<const A&, view>;
}();

// A typed stub of a method of one argument.
template <class Fn>
concept one_argument_stub = is_method_ref_v<Fn> && Fn::arity == 1;

// Whether a typed stub's overload that takes its one argument as declared (so that `{1, 2}` builds
// an aggregate) is the one for these arguments: a method of one argument, given one (after the
// optional context) that converts to it. Every other typed call goes through the checks below.
template <class Fn, class... A>
inline constexpr bool takes_as_declared = false;
template <one_argument_stub Fn, class... A>
inline constexpr bool takes_as_declared<Fn, A...> = [] {
  using declared = typename Fn::argument_type;
  if constexpr (sizeof...(A) == 2 && leads_with_context<A...>)
    return std::is_convertible_v<const std::tuple_element_t<1, std::tuple<A...>>&, declared>;
  else
    return sizeof...(A) == 1 && (std::is_convertible_v<const A&, declared> && ...);
}();

// The checks of a typed stub's arguments. Each static_assert sits in a function whose template
// arguments are what it is about, so that the compiler's first lines name them: GCC's "In
// instantiation of ... [with ... Position = 2; Declared = int; Given = char [3]]", Clang's
// "static_assert failed due to requirement 'typed_call_argument<2, int, char[3]>::converts'".
template <std::size_t Declared, std::size_t Given>
struct typed_call_arity {
  static constexpr bool matches = Declared == Given;
};
template <std::size_t Declared, std::size_t Given>
constexpr bool check_typed_call_arity() {
  static_assert(typed_call_arity<Declared, Given>::matches,
                "geerpc: a typed stub was called with the wrong number of arguments for its method "
                "(Declared: how many it takes; Given: how many it got)");
  return typed_call_arity<Declared, Given>::matches;
}

template <std::size_t Position, class Declared, class Given>
struct typed_call_argument {
  static constexpr bool converts = argument_fits<Declared, Given>;
};
template <std::size_t Position, class Declared, class Given>
constexpr bool check_typed_call_argument() {
  static_assert(typed_call_argument<Position, Declared, Given>::converts,
                "geerpc: a typed stub was called with an argument that does not convert to the type its "
                "method declares (Position: which argument, from 1; Declared: the method's type; Given: "
                "the argument's)");
  return typed_call_argument<Position, Declared, Given>::converts;
}

// Whether the arguments fit the stub's method: false after a static_assert that says why.
template <class Fn, class... A>
constexpr bool check_typed_call() {
  if constexpr (!check_typed_call_arity<Fn::arity, sizeof...(A)>()) {
    return false;
  } else {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      // Each one checked, not only up to the first that fails: every argument that does not fit is named.
      const bool fits[] = {
          true, check_typed_call_argument<I + 1, std::tuple_element_t<I, typename Fn::argument_types>, A>()...};
      for (const bool fit : fits)
        if (!fit) return false;
      return true;
    }
    (std::index_sequence_for<A...>{});
  }
}

// An argument as what encodes as its declared type D: itself when it is a D, a view of it when it
// views as D's view, otherwise a D converted from it (a temporary that lives for the call).
template <class D, class A>
decltype(auto) as_declared(const A& argument) {
  using view = typename argument_view<D>::type;
  if constexpr (std::is_same_v<A, D>)
    return (argument);
  else if constexpr (!std::is_void_v<view> && std::is_convertible_v<const A&, view>)
    return view(argument);
  else
    return D(argument);
}

// Calls `f` with each argument as its declared type (a std::tuple of them).
template <class Declared, class F, class... A>
decltype(auto) with_declared(F&& f, const A&... arguments) {
  return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
    return f(as_declared<std::tuple_element_t<I, Declared>>(arguments)...);
  }
  (std::index_sequence_for<A...>{});
}

// Whether a call by name's arguments (after the optional context) start with its method's name.
template <class... A>
inline constexpr bool names_a_method = false;
template <class First, class... Rest>
inline constexpr bool names_a_method<First, Rest...> = std::is_convertible_v<const First&, std::string_view>;

}  // namespace detail

template <class Derived, class Transport, class Codec>
class call_surface {
  template <class T, bool Async>
  using returns =
      std::conditional_t<Async, call_future<detail::reply_t<T>, Codec, Transport>, result<detail::reply_t<T>>>;

 public:
  // ---- client.call<R>([ctx,] "Service.Method", arguments...): the arguments are encoded as they
  // are given, so they must be the handler's types (a string literal, C string or std::string_view
  // travels as a std::string, a std::span as a std::vector).
  // ---- client.call<Api::fn<"Method">>([ctx,] arguments...): each argument checked at compile
  // time against the method's declaration and converted to its declared type.
  template <class T, class... A>
  requires(!detail::takes_as_declared<T, A...>) detail::reply_t<T> call(const A&... arguments) {
    return route<T, false>(arguments...).value();
  }
  template <class T, class... A>
  requires(!detail::takes_as_declared<T, A...>) result<detail::reply_t<T>> try_call(const A&... arguments) {
    return route<T, false>(arguments...);
  }
  // Threaded transport: the call is on the wire when this returns.
  template <class T, class... A>
  requires(!detail::takes_as_declared<T, A...>) returns<T, true> async_call(const A&... arguments) {
    return route<T, true>(arguments...);
  }

  // ---- a typed stub of a method of one argument takes it as declared: `call<Fn>({1, 2})`.
  template <detail::one_argument_stub Fn>
  typename Fn::result_type call(const typename Fn::argument_type& argument) {
    return by_name<typename Fn::result_type, false>(context{}, Fn::name.view(), argument).value();
  }
  template <detail::one_argument_stub Fn>
  typename Fn::result_type call(const context& ctx, const typename Fn::argument_type& argument) {
    return by_name<typename Fn::result_type, false>(ctx, Fn::name.view(), argument).value();
  }
  template <detail::one_argument_stub Fn>
  returns<Fn, false> try_call(const typename Fn::argument_type& argument) {
    return by_name<typename Fn::result_type, false>(context{}, Fn::name.view(), argument);
  }
  template <detail::one_argument_stub Fn>
  returns<Fn, false> try_call(const context& ctx, const typename Fn::argument_type& argument) {
    return by_name<typename Fn::result_type, false>(ctx, Fn::name.view(), argument);
  }
  template <detail::one_argument_stub Fn>
  returns<Fn, true> async_call(const typename Fn::argument_type& argument) {
    return by_name<typename Fn::result_type, true>(context{}, Fn::name.view(), argument);
  }
  template <detail::one_argument_stub Fn>
  returns<Fn, true> async_call(const context& ctx, const typename Fn::argument_type& argument) {
    return by_name<typename Fn::result_type, true>(ctx, Fn::name.view(), argument);
  }

 private:
  // The optional leading context split off.
  template <class T, bool Async, class... A>
  returns<T, Async> route(const A&... arguments) {
    if constexpr (detail::leads_with_context<A...>)
      return with_context<T, Async>(arguments...);
    else
      return with_context<T, Async>(context{}, arguments...);
  }

  template <class T, bool Async, class... A>
  returns<T, Async> with_context(const context& ctx, const A&... arguments) {
    if constexpr (is_method_ref_v<T>) {
      if constexpr (detail::check_typed_call<T, A...>()) {
        return detail::with_declared<typename T::argument_types>(
            [&](const auto&... declared) {
              return by_name<typename T::result_type, Async>(ctx, T::name.view(), declared...);
            },
            arguments...);
      } else {
        std::terminate();  // not compiled into a program: the check above stopped the compile
      }
    } else {
      static_assert(detail::names_a_method<A...>,
                    "geerpc: a call by name takes the method's name first, after an optional context: "
                    "client.call<R>([ctx,] \"Service.Method\", arguments...)");
      if constexpr (detail::names_a_method<A...>)
        return by_name<T, Async>(ctx, arguments...);
      else
        std::terminate();  // as above
    }
  }

  template <class R, bool Async, class... A>
  returns<R, Async> by_name(const context& ctx, std::string_view method, const A&... arguments) {
    static_assert(detail::not_context<A...>,
                  "geerpc: a call's context comes first, before the method's name and the arguments");
    if (const std::optional<context> merged = detail::inherited_here(ctx)) [[unlikely]]
      return send<R, Async>(*merged, method, arguments...);
    return send<R, Async>(ctx, method, arguments...);
  }

  template <class R, bool Async, class... A>
  returns<R, Async> send(const context& ctx, std::string_view method, const A&... arguments) {
    if constexpr (Async)
      return static_cast<Derived&>(*this).template start<R>(ctx, method, arguments...);
    else
      return static_cast<Derived&>(*this).template invoke<R>(ctx, method, arguments...);
  }
};

GEERPC_END_NAMESPACE
