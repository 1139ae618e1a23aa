// geerpc: error codes (a std::error_category of our own), the exception the throwing calls raise,
// and result<T>, what the non-throwing calls return.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include "config.hpp"

GEERPC_BEGIN_NAMESPACE

// The numeric values are part of the wire protocol (the status byte of a response frame, see
// docs/protocol.md): never renumber, only append.
enum class errc : std::uint8_t {
  connect_timeout = 1,      // client: TCP connect + handshake took longer than options.timeouts.connect
  deadline_exceeded = 2,    // the call's deadline passed
  canceled = 3,             // the call's stop_token was triggered
  handle_timeout = 4,       // server: the handler ran longer than options.timeouts.handle
  unknown_service = 5,      // server: no such service
  unknown_method = 6,       // server: no such method in the service
  bad_request = 7,          // server: malformed "Service.Method" or a body that does not decode
  remote_error = 8,         // server: the handler threw; the message is its what()
  connection_closed = 9,    // client: the connection broke or was closed
  busy = 10,                // server: too many requests in flight
  protocol_error = 11,      // client: the handshake reply broke the protocol
  connect_failed = 12,      // client: could not reach or resolve the address
  handshake_rejected = 13,  // client: the server refused the handshake (its reason is the message)
  bad_response = 14,        // client: the reply body does not decode as the expected type
  invalid_argument = 15,    // a bad address or a bad use of the API
  type_mismatch = 16,       // server: the call's argument or result types are not the method's
  unauthenticated = 17,     // server: an interceptor found no valid credentials on the call
  permission_denied = 18,   // server: an interceptor refused the caller this call
  going_away = 19,          // the server is shutting down: the call was not run (safe to retry elsewhere)
  aborted = 20,             // server: shutdown's drain deadline passed while the handler ran
  no_servers = 21,          // balanced client: its discovery gave no server to call
};
inline constexpr errc last_errc = errc::no_servers;

namespace detail {
class error_category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "geerpc"; }
  std::string message(int value) const override {
    switch (static_cast<errc>(value)) {
      case errc::connect_timeout:
        return "connect timeout";
      case errc::deadline_exceeded:
        return "deadline exceeded";
      case errc::canceled:
        return "canceled";
      case errc::handle_timeout:
        return "request handle timeout";
      case errc::unknown_service:
        return "unknown service";
      case errc::unknown_method:
        return "unknown method";
      case errc::bad_request:
        return "bad request";
      case errc::remote_error:
        return "remote error";
      case errc::connection_closed:
        return "connection closed";
      case errc::busy:
        return "server busy";
      case errc::protocol_error:
        return "protocol error";
      case errc::connect_failed:
        return "connect failed";
      case errc::handshake_rejected:
        return "handshake rejected";
      case errc::bad_response:
        return "bad response";
      case errc::invalid_argument:
        return "invalid argument";
      case errc::type_mismatch:
        return "type mismatch";
      case errc::unauthenticated:
        return "unauthenticated";
      case errc::permission_denied:
        return "permission denied";
      case errc::going_away:
        return "server going away";
      case errc::aborted:
        return "aborted by server shutdown";
      case errc::no_servers:
        return "no servers";
    }
    return "unknown geerpc error " + std::to_string(value);
  }
};
}  // namespace detail

inline const std::error_category& category() noexcept {
  static const detail::error_category instance;
  return instance;
}

inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), category()}; }

namespace detail {
// The errc a code a user chose travels as: itself when it is one of geerpc's, remote_error otherwise.
inline errc wire_errc(const std::error_code& code) noexcept {
  const bool ours =
      code && code.category() == category() && code.value() > 0 && code.value() <= static_cast<int>(last_errc);
  return ours ? static_cast<errc>(code.value()) : errc::remote_error;
}
}  // namespace detail

// What a failed call carries: the code to branch on and the message to show (GeeRPC's wording, or the
// text a remote handler threw).
struct error {
  std::error_code code;
  std::string message;
};

// Thrown by the throwing calls. what() is the full message, code() the geerpc error code.
class rpc_error : public std::system_error {
 public:
  rpc_error(std::error_code code, const std::string& message) : std::system_error(code), message_(message) {}
  explicit rpc_error(const error& e) : rpc_error(e.code, e.message) {}
  // std::system_error::what() would append ": " and the category's text; our messages are complete.
  const char* what() const noexcept override { return message_.what(); }

 private:
  std::runtime_error message_;  // a copy-noexcept string holder, as exceptions should have
};

// The outcome of a non-throwing call: a value or an error. value() throws rpc_error on an error.
// Its own storage rather than std::variant or std::optional: result<T> is instantiated for every
// reply type a user calls with, and their layered machinery costs each instantiation dozens of
// functions in every translation unit built without optimisation.
template <class T>
class result {
 public:
  result(T value) : engaged_(true) { ::new (static_cast<void*>(&value_)) T(std::move(value)); }  // NOLINT: implicit
  result(geerpc::error e) : error_(std::move(e)) {}                                              // NOLINT

  result(const result& other) requires std::is_copy_constructible_v<T> : error_(other.error_) {
    if (other.engaged_) emplace(other.value_);
  }
  result(result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) : error_(std::move(other.error_)) {
    if (other.engaged_) emplace(std::move(other.value_));
  }
  result& operator=(const result& other) requires std::is_copy_constructible_v<T> {
    if (this != &other) {
      reset();
      error_ = other.error_;
      if (other.engaged_) emplace(other.value_);
    }
    return *this;
  }
  result& operator=(result&& other) noexcept(std::is_nothrow_move_constructible_v<T>) {
    if (this != &other) {
      reset();
      error_ = std::move(other.error_);
      if (other.engaged_) emplace(std::move(other.value_));
    }
    return *this;
  }
  ~result() { reset(); }

  bool has_value() const noexcept { return engaged_; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & {
    throw_if_error();
    return value_;
  }
  const T& value() const& {
    throw_if_error();
    return value_;
  }
  T&& value() && {
    throw_if_error();
    return std::move(value_);
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The error, or a default (empty) one when there is a value.
  std::error_code code() const noexcept { return error_.code; }
  const std::string& message() const noexcept { return error_.message; }
  const geerpc::error& error() const { return error_; }

 private:
  template <class U>
  void emplace(U&& from) {
    ::new (static_cast<void*>(&value_)) T(std::forward<U>(from));
    engaged_ = true;
  }
  void reset() noexcept {
    if (engaged_) value_.~T();
    engaged_ = false;
  }
  void throw_if_error() const {
    if (!engaged_) throw rpc_error(error_);
  }

  union {
    T value_;  // alive while engaged_
  };
  bool engaged_ = false;
  geerpc::error error_;  // empty while there is a value
};

template <>
class result<void> {
 public:
  result() = default;
  result(geerpc::error e) : error_(std::move(e)), failed_(true) {}  // NOLINT: implicit by design

  bool has_value() const noexcept { return !failed_; }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (failed_) throw rpc_error(error_);
  }
  std::error_code code() const noexcept { return error_.code; }
  const std::string& message() const noexcept { return error_.message; }
  const geerpc::error& error() const { return error_; }

 private:
  geerpc::error error_;
  bool failed_ = false;
};

GEERPC_END_NAMESPACE

template <>
struct std::is_error_code_enum<geerpc::errc> : std::true_type {};
