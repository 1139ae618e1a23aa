// geerpc: the server's table from "Service.Method" to the code that decodes the argument, calls
// the handler and encodes its result. Built once by server::add<Service>() before serving starts;
// read-only while serving, so lookups need no lock.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../call_context.hpp"
#include "../codec/fingerprint.hpp"
#include "../codec/json_schema.hpp"
#include "../codec/serializable.hpp"
#include "../codecs.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../responder.hpp"
#include "../service.hpp"
#include "method_signature.hpp"
#include "unknown_name.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// The result of running one handler: status 0 and the encoded reply appended to the output, or an
// error status and its message; or `deferred`: the handler took a responder, which answers and
// releases the request itself.
struct invoke_outcome {
  std::uint8_t status = 0;
  bool deferred = false;
  std::string message;

  static invoke_outcome failure(errc code, std::string message) {
    return {static_cast<std::uint8_t>(code), false, std::move(message)};
  }
};

struct handler_entry {
  using invoke_fn = invoke_outcome (*)(void* impl, std::span<const std::byte> argument, std::stop_token stop,
                                       const call_context& context, const deferred_target& later,
                                       std::vector<std::byte>& reply);
  std::string name;  // "Service.Method"
  // One per codec of the server (codecs.hpp), in its order: a connection calls its hello's.
  std::array<invoke_fn, max_codecs> invokes{};
  void* impl = nullptr;
  bool takes_stop_token = false;  // the server makes a stop_source only for handlers that can see it
  std::uint32_t fingerprint = 0;  // the method's type fingerprint (codec/fingerprint.hpp), 0 = none
  // Per codec slot: whether that codec's calls carry this fingerprint (binary_codec's do; JSON
  // matches fields by name and is never judged by it, whatever a foreign client's flags say).
  std::array<bool, max_codecs> fingerprinted{};
  const std::string* schema = nullptr;  // the text it hashes, with names (codec/schema.hpp); null = none
  std::string signature;                // "(Args) -> int", as the debug page shows it
  // Its arguments' and result's JSON Schemas (codec/json_schema.hpp), made once per signature.
  const codec::call_json_schema_text* json_schema = nullptr;
  // One of the server's own methods (geerpc.Describe: server/describe.hpp), served only to the
  // peers the debug page's policy admits; to others, and in the names an unknown name's error
  // suggests, it does not exist.
  bool builtin = false;
};

// The service of the server's own methods: a user's service may not take its name.
inline constexpr std::string_view builtin_service_name = "geerpc";

template <class Codec, class R>
void encode_erased(const void* value, std::vector<std::byte>& out) {
  if constexpr (!std::is_void_v<R>) Codec::encode(*static_cast<const R*>(value), out);
}

// Fails the build: a handler's arguments are made, then decoded into.
template <class T>
void argument_must_be_default_constructible() {
  static_assert(codec::always_false<T>, "geerpc: a handler's argument must be default-constructible");
}

template <class Codec, class Method, class Impl>
struct invoker {
  static invoke_outcome invoke(void* impl, std::span<const std::byte> bytes, std::stop_token stop,
                               const call_context& context, const deferred_target& later,
                               std::vector<std::byte>& reply) {
    if constexpr (std::is_default_constructible_v<typename Method::argument_type>) {
      return run(impl, bytes, std::move(stop), context, later, reply);
    } else {
      // Nothing to decode into. Where the reason is one the codec names (a struct with a reference
      // member: which one), its message is the one shown.
      using argument_type = typename Method::argument_type;
      if constexpr (!codec::is_serializable_v<argument_type>)
        codec::require_serializable<argument_type>();
      else
        argument_must_be_default_constructible<argument_type>();
      (void)impl, (void)bytes, (void)stop, (void)context, (void)later, (void)reply;
      return {};
    }
  }

 private:
  static invoke_outcome run(void* impl, std::span<const std::byte> bytes, std::stop_token stop,
                            const call_context& context, const deferred_target& later, std::vector<std::byte>& reply) {
    using result_type = typename Method::result_type;
    deferred_state* state = nullptr;  // a responder's, shared with it while the handler runs
    try {
      // One argument is decoded as itself, any other number as their tuple (which encodes as they do
      // one after another); or as the codec reads a call's arguments (json_codec: one array).
      typename Method::argument_type arguments{};
      if (auto status = decode_arguments(bytes, arguments); !status)
        return invoke_outcome::failure(errc::bad_request, "rpc server: bad request body: " + status.message());
      if constexpr (Method::takes_responder) {
        deferred_target target = later;
        target.stop = stop;  // the responder's stop_token()
        state = new deferred_state(std::move(target), &encode_erased<Codec, result_type>);
        state->retain();  // one for the responder, one kept here
        call(impl, arguments, stop, context,
             typename Method::responder_type(typename Method::responder_type::from_server{}, state));
        if (later.handed_on != nullptr) later.handed_on(later.request);
        state->release();
        return {0, true, {}};
      } else if constexpr (std::is_void_v<result_type>) {
        call(impl, arguments, stop, context, 0);
      } else {
        auto&& result = call(impl, arguments, stop, context, 0);
        return encode_result(result, reply);
      }
      return {};
    } catch (const std::exception& e) {
      return failed(state, e.what());
    } catch (...) {
      return failed(state, "rpc server: the handler threw a non-standard exception");
    }
  }

  // A result the codec cannot write (json_codec: a NaN) is answered as a responder's is.
  template <class R>
  static invoke_outcome encode_result(const R& result, std::vector<std::byte>& reply) {
    try {
      Codec::encode(result, reply);
      return {};
    } catch (const std::exception& e) {
      return invoke_outcome::failure(errc::remote_error,
                                     std::string("rpc server: the reply did not encode: ") + e.what());
    }
  }

  static auto decode_arguments(std::span<const std::byte> bytes, typename Method::argument_type& arguments) {
    if constexpr (requires { Codec::template decode_arguments<Method::arity>(bytes, arguments); })
      return Codec::template decode_arguments<Method::arity>(bytes, arguments);
    else
      return Codec::decode(bytes, arguments);
  }

  // A handler threw. One that took a responder answers through it, unless it did already.
  static invoke_outcome failed(deferred_state* state, const char* what) {
    if (state == nullptr) return invoke_outcome::failure(errc::remote_error, what);
    state->fail(static_cast<std::uint8_t>(errc::remote_error), what);
    state->release();
    return {0, true, {}};
  }

  // The arguments are the handler's own: one taken by value is moved into it. One argument is
  // passed on as it is, never in a std::tuple: GCC 12 spends time exponential in a type's nesting
  // depth on a tuple of it (a vector nested 26 deep: 12 s for a std::tuple<T&> alone).
  template <class Responder>
  static decltype(auto) call(void* impl, typename Method::argument_type& argument, std::stop_token& stop,
                             const call_context& context, Responder&& reply) {
    if constexpr (Method::arity == 1)
      return call_with(impl, stop, context, reply, std::move(argument));
    else
      return std::apply(
          [&](auto&... args) -> decltype(auto) { return call_with(impl, stop, context, reply, std::move(args)...); },
          argument);
  }

  // The extra of `Kind` (service.hpp's detail::extra) the handler takes next.
  template <int Kind, class Responder>
  static decltype(auto) extra_of(std::stop_token& stop, const call_context& context, Responder& reply) {
    if constexpr (Kind == extra::stop_token)
      return std::move(stop);
    else if constexpr (Kind == extra::context)
      return (context);
    else
      return std::move(reply);
  }

  // The handler, given its arguments and then the extras it takes, in its order.
  template <class Responder, class... Arguments>
  static decltype(auto) call_with(void* impl, std::stop_token& stop, const call_context& context, Responder& reply,
                                  Arguments&&... arguments) {
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
      return handler_of(impl, std::forward<Arguments>(arguments)...,
                        extra_of<Method::extra_kinds[I]>(stop, context, reply)...);
    }
    (std::make_index_sequence<Method::extra_kinds.size()>{});
  }

  template <class... All>
  static decltype(auto) handler_of(void* impl, All&&... all) {
    constexpr auto handler = Method::handler;
    if constexpr (std::is_void_v<typename Method::owner>) {
      (void)impl;
      return handler(std::forward<All>(all)...);
    } else {
      return (static_cast<Impl*>(impl)->*handler)(std::forward<All>(all)...);
    }
  }
};

class dispatcher {
 public:
  // Registers every method of Service, for a codec or a codecs<...> set (codecs.hpp). Throws
  // rpc_error(invalid_argument) when a service of that name is already registered (GeeRPC's "rpc:
  // service already defined").
  template <class Codecs, class Service, class Impl>
  void add(Impl* impl) {
    const std::string service_name(Service::name.view());
    if (service_name == builtin_service_name)
      throw rpc_error(errc::invalid_argument,
                      "rpc: the service name \"geerpc\" is reserved for the server's own methods (geerpc.Describe)");
    const std::size_t at = lower_bound(services_, service_name);
    if (at != services_.size() && services_[at] == service_name)
      throw rpc_error(errc::invalid_argument, "rpc: service already defined: " + service_name);
    services_.insert(services_.begin() + static_cast<std::ptrdiff_t>(at), service_name);
    std::apply([&](auto... methods) { (add_method<Codecs, Impl, decltype(methods)>(service_name, impl), ...); },
               typename Service::methods{});
  }

  // Registers the server's own methods (builtin_service_name's), bound to `impl`; basic_server does,
  // once, when made. Their service is not listed among the user's (services_).
  template <class Codecs, class Service, class Impl>
  void add_builtin(Impl* impl) {
    static_assert(Service::name.view() == builtin_service_name);
    const std::string service_name(Service::name.view());
    std::apply([&](auto... methods) { (add_method<Codecs, Impl, decltype(methods)>(service_name, impl, true), ...); },
               typename Service::methods{});
  }

  // Every method, sorted by name (by length, then bytes): what the debug page lists, the server's
  // own (handler_entry::builtin) included.
  const std::vector<handler_entry>& methods() const noexcept { return methods_; }

  // Finds the handler of a "Service.Method" name, or says in GeeRPC's words why there is none. A
  // built-in method is found: its caller asks the debug page's policy (server/connection.hpp).
  const handler_entry* find(std::string_view name, errc& code, std::string& message) const {
    if (const handler_entry* method = lookup(methods_, name)) return method;
    explain_missing(name, code, message);
    return nullptr;
  }

  // Why `name` is served by none of the user's methods, in find()'s words: what a peer the debug
  // page's policy refuses is told of a built-in method's name, as of any name that is not served.
  void explain_missing(std::string_view name, errc& code, std::string& message) const {
    const std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) {
      code = errc::bad_request;
      message = ill_formed_name_message(name);
    } else if (lookup(services_, name.substr(0, dot)) == nullptr) {
      code = errc::unknown_service;
      std::vector<std::string_view> registered;
      for (const handler_entry& entry : methods_)
        if (!entry.builtin) registered.push_back(entry.name);
      message = unknown_service_message(name, name.substr(0, dot), registered);
    } else {
      code = errc::unknown_method;
      message = unknown_method_message(name.substr(0, dot), name.substr(dot + 1), methods_of(name.substr(0, dot + 1)));
    }
  }

  // The handler of a "Service.Method" name, or null: find() without the words.
  const handler_entry* served(std::string_view name) const noexcept { return lookup(methods_, name); }

  bool empty() const noexcept { return methods_.empty(); }

 private:
  template <class Codecs, class Impl, class Method>
  void add_method(const std::string& service_name, Impl* impl, bool builtin = false) {
    handler_entry method;
    method.builtin = builtin;
    method.name = service_name + "." + std::string(Method::name.view());
    set_invokers<Method, Impl>(method, codec_list_t<Codecs>{});
    method.impl = const_cast<void*>(static_cast<const void*>(impl));
    // A responder's stop_token() is its request's.
    method.takes_stop_token = Method::takes_stop_token || Method::takes_responder;
    method.signature = signature_of<typename Method::argument_types, typename Method::result_type>();
    method.json_schema = &codec::call_json_schema<typename Method::argument_types, typename Method::result_type>();
    const std::size_t at = lower_bound(methods_, method.name);
    methods_.insert(methods_.begin() + static_cast<std::ptrdiff_t>(at), std::move(method));
  }

  // Each codec's invoker, and the type fingerprint and schema of the first codec that has them
  // (binary_codec's: a codec without them, as JSON, sends none and is not checked by them).
  template <class Method, class Impl, class... Codecs>
  static void set_invokers(handler_entry& method, codecs<Codecs...>) {
    static_assert(sizeof...(Codecs) <= max_codecs, "geerpc::codecs: at most 4 codecs in one server");
    using arguments = typename Method::argument_types;
    using result = typename Method::result_type;
    std::size_t slot = 0;
    ((method.invokes[slot++] = &invoker<Codecs, Method, Impl>::invoke), ...);
    const auto take_types_of = [&]<class Codec>() {
      if (method.fingerprint != 0) return;
      method.fingerprint = fingerprint_of<Codec, arguments, result>();
      method.schema = schema_of<Codec, arguments, result>();
    };
    (take_types_of.template operator()<Codecs>(), ...);
    const auto judged_by = [&]<class Codec>() {
      constexpr std::uint32_t own = fingerprint_of<Codec, arguments, result>();
      return own != 0 && own == method.fingerprint;
    };
    slot = 0;
    ((method.fingerprinted[slot++] = judged_by.template operator()<Codecs>()), ...);
  }

  // The names of the methods whose full names begin with `prefix` ("Service."), without it, sorted.
  std::vector<std::string_view> methods_of(std::string_view prefix) const {
    std::vector<std::string_view> names;
    for (const handler_entry& entry : methods_)
      if (std::string_view(entry.name).starts_with(prefix))
        names.push_back(std::string_view(entry.name).substr(prefix.size()));
    std::sort(names.begin(), names.end());
    return names;
  }

  static std::string_view name_of(const handler_entry& entry) noexcept { return entry.name; }
  static std::string_view name_of(const std::string& name) noexcept { return name; }

  // Names in the tables' order: by length, then by their bytes. Most names differ in length, which
  // one comparison tells: a lookup among a handful compares the bytes of one name, the one found.
  static bool before(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return a.size() < b.size();
    return a.compare(b) < 0;
  }
  static bool same(std::string_view a, std::string_view b) noexcept {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
  }

  // The first index whose name is not before `name`. Sorted vectors rather than hash tables: a
  // server holds a handful of names, a lookup compares a few short strings, and every user's
  // translation unit is spared instantiating (and at -O0 emitting) two hash tables of strings.
  // The entry named `name`, or null. A handful of names are scanned, which mostly compares lengths
  // and reads the bytes of the one that matches; more are halved.
  template <class Entry>
  static const Entry* lookup(const std::vector<Entry>& sorted, std::string_view name) noexcept {
    if (sorted.size() <= 8) {
      for (const Entry& entry : sorted)
        if (same(name_of(entry), name)) return &entry;
      return nullptr;
    }
    const std::size_t at = lower_bound(sorted, name);
    return at != sorted.size() && same(name_of(sorted[at]), name) ? &sorted[at] : nullptr;
  }

  template <class Entry>
  static std::size_t lower_bound(const std::vector<Entry>& sorted, std::string_view name) noexcept {
    std::size_t first = 0;
    std::size_t count = sorted.size();
    while (count > 0) {
      const std::size_t half = count / 2;
      if (before(name_of(sorted[first + half]), name)) {
        first += half + 1;
        count -= half + 1;
      } else {
        count = half;
      }
    }
    return first;
  }

  std::vector<handler_entry> methods_;  // sorted by name
  std::vector<std::string> services_;   // sorted
};

}  // namespace detail
GEERPC_END_NAMESPACE
