// geerpc: reading etcd's JSON answers (nlohmann-json): the error a bad answer raises, and the two
// kinds of field etcd's gateway writes, 64-bit integers as strings and bytes as base64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "../config.hpp"
#include "../detail/base64.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd {

// etcd could not be reached, or answered with an error or with something that is not its JSON.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// etcd refused the auth token sent (expired, or revoked by a password change or an auth disable):
// the gateway authenticates again once and retries.
class token_rejected : public error {
 public:
  using error::error;
};

namespace detail {

// Whether an error answer (or a canceled watch's reason) says the token is no good: an unknown or
// expired token, or one older than the last change to users and roles.
inline bool says_token_rejected(std::string_view message) {
  return message.find("invalid auth token") != std::string_view::npos ||
         message.find("revision of auth store is old") != std::string_view::npos;
}

// etcd's gateway writes 64-bit integers as JSON strings ("TTL": "10"); absent means zero.
inline std::int64_t json_int(const nlohmann::json& object, const char* name) {
  const auto found = object.find(name);
  if (found == object.end() || found->is_null()) return 0;
  if (found->is_number_integer()) return found->get<std::int64_t>();
  if (!found->is_string()) throw error(std::string("etcd: field ") + name + " is not an integer");
  const auto& text = found->get_ref<const std::string&>();
  std::size_t used = 0;
  std::int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw error(std::string("etcd: field ") + name + " is not an integer: " + text);
  return value;
}

// Bytes etcd sent as base64 (keys and values); absent or not a string means none.
inline std::string json_bytes(const nlohmann::json& object, const char* name) {
  const auto found = object.find(name);
  if (found == object.end() || !found->is_string()) return {};
  auto decoded = geerpc::detail::base64_decode(found->get_ref<const std::string&>());
  if (!decoded) throw error(std::string("etcd: field ") + name + " is not base64");
  return std::move(*decoded);
}

}  // namespace detail
}  // namespace etcd
GEERPC_END_NAMESPACE
