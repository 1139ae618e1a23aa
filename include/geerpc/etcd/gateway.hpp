// geerpc: a small client of etcd v3's JSON gateway (etcd 3.4 and later serve it on the client URL,
// under /v3/): the six calls a registry needs — grant, keep alive and revoke a lease, put, range
// by prefix, and watch a prefix. HTTP goes through libcurl, JSON through nlohmann-json; both are
// needed by this header only (the geerpc::etcd CMake target), never by the core.
//
// Every call is one POST, bounded by options::request_timeout and ended within milliseconds when
// the stop token it is given fires (it then throws error, "stopped"); a watch is one long POST
// whose answer streams one JSON object per line, until it fails or its stop token is triggered.
// Endpoints are tried in turn: the first that answers serves the call. Every connection (calls
// and watches) uses options::tls on https:// endpoints; with options::user, each carries etcd's
// auth token (auth_token.hpp), got anew once when etcd rejects it. Several threads may share one
// gateway; why a call failed is worded by failure.hpp.
#pragma once

#include <arpa/inet.h>

#include <curl/curl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/base64.hpp"
#include "../detail/chrono.hpp"
#include "answers.hpp"
#include "auth_token.hpp"
#include "curl_easy.hpp"
#include "failure.hpp"
#include "options.hpp"
#include "watch_stream.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd {

struct key_value {
  std::string key;
  std::string value;
};

namespace detail {

// The end of the key range holding every key that starts with prefix (etcd's range_end).
inline std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto& last = prefix.back();
    if (static_cast<unsigned char>(last) != 0xff) {
      last = static_cast<char>(static_cast<unsigned char>(last) + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\0');  // every key
}

// Whether an http:// endpoint's host is this machine (127.0.0.0/8, [::1], localhost): the only
// place a password may travel in plaintext.
inline bool loopback_http(std::string_view endpoint) {
  constexpr std::string_view scheme = "http://";
  if (endpoint.substr(0, scheme.size()) != scheme) return false;
  std::string_view host = endpoint.substr(scheme.size());
  host = host.substr(0, host.find('/'));
  if (host.substr(0, 5) == "[::1]") return true;
  host = host.substr(0, host.find(':'));
  if (host == "localhost") return true;
  in_addr address{};  // an IPv4 literal in 127.0.0.0/8, not a name that begins "127."
  return ::inet_pton(AF_INET, std::string(host).c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

}  // namespace detail

class gateway {
 public:
  explicit gateway(options opts = {}) : opts_(std::move(opts)), token_(std::make_shared<detail::auth_token>()) {
    if (opts_.endpoints.empty()) throw std::invalid_argument("geerpc::etcd: no endpoint");
    if (!opts_.user.empty())
      for (const std::string& endpoint : opts_.endpoints)
        if (endpoint.rfind("https://", 0) != 0 && !detail::loopback_http(endpoint))
          throw std::invalid_argument("geerpc::etcd: options::user with " + endpoint +
                                      ": the password and token would cross the network in plaintext; use an "
                                      "https:// endpoint (or a loopback address)");
    detail::init_curl();
  }

  const options& settings() const noexcept { return opts_; }

  // How many auth tokens etcd has given this gateway: 0 without options::user, 1 after the first
  // request, one more each time etcd rejected the token and the gateway authenticated again.
  std::uint64_t authentications() const { return token_->authentications(); }

  // A lease of ttl seconds (etcd's minimum and rounding apply); its ID.
  std::int64_t grant(std::chrono::seconds ttl, const std::stop_token& stop = {}) {
    const auto reply = post("/v3/lease/grant", {{"TTL", ttl.count()}}, stop);
    const auto id = detail::json_int(reply, "ID");
    if (id == 0) throw error("etcd: lease grant returned no ID: " + reply.dump());
    return id;
  }

  // Keeps the lease alive once; its remaining TTL in seconds, 0 when etcd no longer has it.
  std::int64_t keep_alive(std::int64_t lease, const std::stop_token& stop = {}) {
    const auto reply = post("/v3/lease/keepalive", {{"ID", std::to_string(lease)}}, stop);
    const auto result = reply.find("result");
    if (result == reply.end() || !result->is_object()) throw error("etcd: keepalive answered " + reply.dump());
    return detail::json_int(*result, "TTL");
  }

  // Ends the lease and deletes its keys. A lease etcd no longer has is not an error.
  void revoke(std::int64_t lease, const std::stop_token& stop = {}) {
    post("/v3/lease/revoke", {{"ID", std::to_string(lease)}}, stop, true);
  }

  void put(std::string_view key, std::string_view value, std::int64_t lease = 0, const std::stop_token& stop = {}) {
    nlohmann::json body{{"key", geerpc::detail::base64_encode(key)}, {"value", geerpc::detail::base64_encode(value)}};
    if (lease != 0) body["lease"] = std::to_string(lease);
    post("/v3/kv/put", body, stop);
  }

  void remove(std::string_view key, const std::stop_token& stop = {}) {
    post("/v3/kv/deleterange", {{"key", geerpc::detail::base64_encode(key)}}, stop);
  }

  struct range_result {
    std::vector<key_value> kvs;
    std::int64_t revision = 0;  // the store's revision the answer reflects
  };

  // Every key starting with prefix, with the revision to watch from (revision + 1).
  range_result range(std::string_view prefix, const std::stop_token& stop = {}) {
    const auto reply = post("/v3/kv/range",
                            {{"key", geerpc::detail::base64_encode(prefix)},
                             {"range_end", geerpc::detail::base64_encode(detail::prefix_end(std::string(prefix)))}},
                            stop);
    range_result out;
    out.revision = header_revision(reply);
    if (const auto kvs = reply.find("kvs"); kvs != reply.end() && kvs->is_array()) {
      for (const auto& kv : *kvs) out.kvs.push_back({detail::json_bytes(kv, "key"), detail::json_bytes(kv, "value")});
    }
    return out;
  }

  // Watches every key starting with prefix from start_revision, calling on_events with each batch
  // of changes, on this thread, until the stop token is triggered (returns normally) or the watch
  // fails (throws error: etcd went away, or the revision was compacted — range again then).
  // Blocks; the stop is seen within a few milliseconds.
  void watch(std::string_view prefix, std::int64_t start_revision,
             const std::function<void(const std::vector<watch_event>&)>& on_events, std::stop_token stop) {
    const nlohmann::json body{{"create_request",
                               {{"key", geerpc::detail::base64_encode(prefix)},
                                {"range_end", geerpc::detail::base64_encode(detail::prefix_end(std::string(prefix)))},
                                {"start_revision", std::to_string(start_revision)}}}};
    const std::string text = body.dump();
    // Opened anew with a fresh token when etcd rejects the one sent (before any event).
    try {
      with_token(stop, [&](const std::string& auth) { watch_endpoints(text, on_events, stop, auth); });
    } catch (const error&) {
      if (!stop.stop_requested()) throw;  // stopped while authenticating: a stop, as during the watch
    }
  }

 private:
  static std::int64_t header_revision(const nlohmann::json& reply) {
    const auto header = reply.find("header");
    return header != reply.end() && header->is_object() ? detail::json_int(*header, "revision") : 0;
  }

  // A registry's answers are small: refuse a runaway one. An answer whose Content-Length says more
  // is refused at its head (CURLOPT_MAXFILESIZE), one of unknown length as it passes the bound.
  static constexpr std::size_t most_answer = 16u << 20;

  static std::size_t append_to_string(char* data, std::size_t size, std::size_t count, void* target) {
    auto& text = *static_cast<std::string*>(target);
    if (text.size() + size * count > most_answer) return 0;
    text.append(data, size * count);
    return size * count;
  }

  // The token to send: none without options::user; the first request authenticates.
  detail::auth_token::snapshot token(const std::stop_token& stop) {
    if (opts_.user.empty()) return {};
    auto seen = token_->current();
    if (seen.generation == 0) seen = token_->refresh(seen, [&] { return authenticate(stop); });
    return seen;
  }

  // Runs attempt(token); when etcd rejects the token, authenticates again once (or takes the token
  // another thread just got) and runs it again. A second rejection is thrown as it is.
  template <class Attempt>
  std::invoke_result_t<Attempt&, const std::string&> with_token(const std::stop_token& stop, Attempt&& attempt) {
    auto seen = token(stop);
    try {
      return attempt(seen.token);
    } catch (const token_rejected&) {
      if (opts_.user.empty()) throw;
      seen = token_->refresh(seen, [&] { return authenticate(stop); });
    }
    return attempt(seen.token);
  }

  // A new token for options::user; empty when etcd has authentication disabled (nothing to send).
  std::string authenticate(const std::stop_token& stop) {
    const std::string body = nlohmann::json{{"name", opts_.user}, {"password", opts_.password}}.dump();
    auto answer = exchange("/v3/auth/authenticate", body, {}, stop);
    const std::string message = detail::answer_message(answer.reply, {});
    if (answer.status != 200 && detail::contains(message, "authentication is not enabled")) return {};
    if (answer.status != 200)
      throw error(detail::describe_answer(answer.url, answer.status, answer.reply, answer.raw, opts_.user));
    const auto token = answer.reply.find("token");
    if (token == answer.reply.end() || !token->is_string() || token->get_ref<const std::string&>().empty())
      throw error("etcd: " + answer.url + " gave no token to user '" + opts_.user + "'");
    return token->get<std::string>();
  }

  // What one endpoint answered: its HTTP status, the answer as JSON (discarded when it is not),
  // and as text (for an error answer that is not etcd's JSON).
  struct http_answer {
    std::string url;
    long status = 0;
    nlohmann::json reply;
    std::string raw;
  };

  // One POST, endpoint after endpoint until one answers. Only failing to reach an endpoint (or to
  // agree on TLS with it) moves on to the next; the last such failure is thrown, in words. A stop
  // ends it at once, tried endpoints or not.
  http_answer exchange(const char* path, const std::string& body, const std::string& auth,
                       const std::stop_token& stop) {
    std::string last_failure = "etcd: unreachable: no endpoint tried";
    for (const auto& endpoint : opts_.endpoints) {
      http_answer out{endpoint + path, 0, {}, {}};
      detail::easy_post request(opts_, out.url, body, auth);
      CURL* h = request.get();
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, detail::curl_millis(opts_.request_timeout));
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &append_to_string);
      curl_easy_setopt(h, CURLOPT_WRITEDATA, &out.raw);
      curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(most_answer));
      const auto finished = detail::perform(h, stop);
      if (!finished) throw error("etcd: " + out.url + ": stopped before etcd answered");
      const CURLcode done = *finished;
      if (done == CURLE_WRITE_ERROR || done == CURLE_FILESIZE_EXCEEDED)
        throw error("etcd: " + out.url + " answered more than 16 MiB");
      if (done != CURLE_OK) {
        last_failure = detail::describe(
            {out.url, done, request.detail(), request.handshake_done(), !opts_.tls.certificate.empty()});
        continue;
      }
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.status);
      out.reply = nlohmann::json::parse(out.raw, nullptr, false);
      if (out.status == 200 && (out.reply.is_discarded() || !out.reply.is_object()))
        throw error("etcd: " + out.url + " answered HTTP 200 with no JSON object");
      return out;
    }
    throw error(last_failure);
  }

  // One POST with a JSON body, with the token when there is one; the JSON answer. An HTTP error
  // from etcd is thrown at once in words (see failure.hpp), except a missing lease on revoke when
  // tolerate_not_found.
  nlohmann::json post(const char* path, const nlohmann::json& body, const std::stop_token& stop,
                      bool tolerate_not_found = false) {
    const std::string text = body.dump();
    return with_token(stop, [&](const std::string& auth) {
      auto out = exchange(path, text, auth, stop);
      if (out.status == 200 || (out.status == 404 && tolerate_not_found && out.reply.is_object()))
        return std::move(out.reply);
      throw error(detail::describe_answer(out.url, out.status, out.reply, out.raw, opts_.user));
    });
  }

  void watch_endpoints(const std::string& body, const std::function<void(const std::vector<watch_event>&)>& on_events,
                       const std::stop_token& stop, const std::string& auth) {
    std::string last_failure = "etcd: unreachable: no endpoint tried";
    for (const auto& endpoint : opts_.endpoints) {
      if (stop.stop_requested()) return;
      bool answered = false;  // a watch that was set up and then broke is not retried on another endpoint
      try {
        watch_once(endpoint, body, on_events, stop, auth, answered);
        return;
      } catch (const error& e) {
        if (answered) throw;
        last_failure = e.what();
      }
    }
    throw error("etcd: watch failed on every endpoint; last: " + last_failure);
  }

  static std::size_t watch_bytes(char* data, std::size_t size, std::size_t count, void* target) {
    // 0 tells libcurl to end the transfer (CURLE_WRITE_ERROR); the stream's failure() says why.
    return static_cast<detail::watch_stream*>(target)->feed({data, size * count}) ? size * count : 0;
  }

  // Why etcd ended a watch, in words: a rejected token is thrown as token_rejected (the caller
  // authenticates again and opens the watch anew).
  [[noreturn]] void watch_ended(const detail::watch_stream& stream, const std::string& url) const {
    const std::string& reason = stream.cancel_reason();
    if (detail::says_token_rejected(reason))
      throw token_rejected("etcd: watch " + url + ": etcd rejected the auth token: " + reason);
    if (const auto refusal = detail::describe_refusal("etcd: watch " + url + ": ", reason, opts_.user);
        !refusal.empty())
      throw error(refusal);
    throw error(stream.failure());
  }

  void watch_once(const std::string& endpoint, const std::string& body,
                  const std::function<void(const std::vector<watch_event>&)>& on_events, const std::stop_token& stop,
                  const std::string& auth, bool& answered) {
    const std::string url = endpoint + "/v3/watch";
    detail::easy_post request(opts_, url, body, auth);
    detail::watch_stream stream(on_events, answered);
    CURL* h = request.get();
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, detail::curl_millis(opts_.request_timeout));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);  // a peer that vanished without a word
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 5L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 2L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &watch_bytes);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &stream);
    const auto finished = detail::perform(h, stop);
    if (!finished) return;
    if (!stream.failure().empty()) watch_ended(stream, url);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (*finished != CURLE_OK)
      throw error(detail::describe(
          {url, *finished, request.detail(), request.handshake_done(), !opts_.tls.certificate.empty()}));
    if (status != 200) throw error("etcd: watch " + url + " answered HTTP " + std::to_string(status));
    throw error("etcd: watch " + url + " ended");
  }

  options opts_;
  // Shared by copies of this gateway (same options, same user): one token, one refresh at a time.
  std::shared_ptr<detail::auth_token> token_;
};

}  // namespace etcd
GEERPC_END_NAMESPACE
