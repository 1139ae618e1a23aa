// geerpc: a small client of etcd v3's JSON gateway (etcd 3.4 and later serve it on the client URL,
// under /v3/): the six calls a registry needs — grant, keep alive and revoke a lease, put, range
// by prefix, and watch a prefix. HTTP goes through libcurl, JSON through nlohmann-json; both are
// needed by this header only (the geerpc::etcd CMake target), never by the core.
//
// Every call is one POST, bounded by options::request_timeout; a watch is one long POST whose
// answer streams one JSON object per line, until it fails or its stop token is triggered.
// Endpoints are tried in turn: the first that answers serves the call.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/chrono.hpp"
#include "answers.hpp"
#include "base64.hpp"
#include "watch_stream.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd {

struct options {
  // etcd's client URLs, tried in turn (etcd's --advertise-client-urls).
  std::vector<std::string> endpoints{"http://127.0.0.1:2379"};
  // How long one call (lease, put, range) may take, the connect included; a watch uses it for its
  // connect only.
  std::chrono::milliseconds request_timeout{1000};
};

struct key_value {
  std::string key;
  std::string value;
};

namespace detail {

// curl_global_init, once per process, before the first handle (thread-safe since libcurl 7.84,
// Debian 12 has 7.88; the function-local static keeps it to one call either way).
inline void init_curl() {
  static const CURLcode initialised = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (initialised != CURLE_OK)
    throw error(std::string("etcd: libcurl failed to start: ") + curl_easy_strerror(initialised));
}

struct easy_deleter {
  void operator()(CURL* handle) const noexcept { curl_easy_cleanup(handle); }
};
using easy_handle = std::unique_ptr<CURL, easy_deleter>;

struct slist_deleter {
  void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
using header_list = std::unique_ptr<curl_slist, slist_deleter>;

// A timeout as libcurl takes it: milliseconds in a long, at least 1 (libcurl reads 0 as no limit).
inline long curl_millis(std::chrono::milliseconds timeout) {
  const auto bounded =
      std::clamp(timeout, std::chrono::milliseconds{1}, std::chrono::milliseconds{std::chrono::hours{24}});
  return std::chrono::duration_cast<std::chrono::duration<long, std::milli>>(bounded).count();
}

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

}  // namespace detail

class gateway {
 public:
  explicit gateway(options opts = {}) : opts_(std::move(opts)) {
    if (opts_.endpoints.empty()) throw std::invalid_argument("geerpc::etcd: no endpoint");
    detail::init_curl();
  }

  const options& settings() const noexcept { return opts_; }

  // A lease of ttl seconds (etcd's minimum and rounding apply); its ID.
  std::int64_t grant(std::chrono::seconds ttl) {
    const auto reply = post("/v3/lease/grant", {{"TTL", ttl.count()}});
    const auto id = detail::json_int(reply, "ID");
    if (id == 0) throw error("etcd: lease grant returned no ID: " + reply.dump());
    return id;
  }

  // Keeps the lease alive once; its remaining TTL in seconds, 0 when etcd no longer has it.
  std::int64_t keep_alive(std::int64_t lease) {
    const auto reply = post("/v3/lease/keepalive", {{"ID", std::to_string(lease)}});
    const auto result = reply.find("result");
    if (result == reply.end() || !result->is_object()) throw error("etcd: keepalive answered " + reply.dump());
    return detail::json_int(*result, "TTL");
  }

  // Ends the lease and deletes its keys. A lease etcd no longer has is not an error.
  void revoke(std::int64_t lease) { post("/v3/lease/revoke", {{"ID", std::to_string(lease)}}, true); }

  void put(std::string_view key, std::string_view value, std::int64_t lease = 0) {
    nlohmann::json body{{"key", base64_encode(key)}, {"value", base64_encode(value)}};
    if (lease != 0) body["lease"] = std::to_string(lease);
    post("/v3/kv/put", body);
  }

  void remove(std::string_view key) { post("/v3/kv/deleterange", {{"key", base64_encode(key)}}); }

  struct range_result {
    std::vector<key_value> kvs;
    std::int64_t revision = 0;  // the store's revision the answer reflects
  };

  // Every key starting with prefix, with the revision to watch from (revision + 1).
  range_result range(std::string_view prefix) {
    const auto reply = post("/v3/kv/range", {{"key", base64_encode(prefix)},
                                             {"range_end", base64_encode(detail::prefix_end(std::string(prefix)))}});
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
                               {{"key", base64_encode(prefix)},
                                {"range_end", base64_encode(detail::prefix_end(std::string(prefix)))},
                                {"start_revision", std::to_string(start_revision)}}}};
    std::string last_failure = "no endpoint tried";
    for (const auto& endpoint : opts_.endpoints) {
      if (stop.stop_requested()) return;
      bool answered = false;  // a watch that was set up and then broke is not retried on another endpoint
      try {
        watch_once(endpoint, body.dump(), on_events, stop, answered);
        return;
      } catch (const error& e) {
        if (answered) throw;
        last_failure = e.what();
      }
    }
    throw error("etcd: watch failed on every endpoint; last: " + last_failure);
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

  // One POST with a JSON body; the JSON answer. Connection failures move on to the next endpoint;
  // an HTTP error from etcd is thrown at once (with etcd's message), except a missing lease on
  // revoke when tolerate_not_found.
  nlohmann::json post(const char* path, const nlohmann::json& body, bool tolerate_not_found = false) {
    const std::string text = body.dump();
    std::string last_failure = "no endpoint tried";
    for (const auto& endpoint : opts_.endpoints) {
      detail::easy_handle handle(curl_easy_init());
      if (!handle) throw error("etcd: libcurl could not make a handle");
      std::string answer;
      detail::header_list headers(curl_slist_append(nullptr, "Content-Type: application/json"));
      const std::string url = endpoint + path;
      CURL* h = handle.get();
      curl_easy_setopt(h, CURLOPT_URL, url.c_str());
      curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, text.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(text.size()));
      curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, detail::curl_millis(opts_.request_timeout));
      curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
      curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &append_to_string);
      curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
      curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(most_answer));
      const CURLcode done = curl_easy_perform(h);
      if (done == CURLE_WRITE_ERROR || done == CURLE_FILESIZE_EXCEEDED)
        throw error("etcd: " + url + " answered more than 16 MiB");
      if (done != CURLE_OK) {
        last_failure = url + ": " + curl_easy_strerror(done);
        continue;
      }
      long status = 0;
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
      auto reply = nlohmann::json::parse(answer, nullptr, false);
      if (reply.is_discarded() || !reply.is_object())
        throw error("etcd: " + url + " answered HTTP " + std::to_string(status) + " with no JSON object");
      if (status == 404 && tolerate_not_found) return reply;
      if (status != 200) {
        const auto message = reply.find("message");
        throw error("etcd: " + url + " answered HTTP " + std::to_string(status) + ": " +
                    (message != reply.end() && message->is_string() ? message->get<std::string>() : reply.dump()));
      }
      return reply;
    }
    throw error("etcd: unreachable: " + last_failure);
  }

  static std::size_t watch_bytes(char* data, std::size_t size, std::size_t count, void* target) {
    // 0 tells libcurl to end the transfer (CURLE_WRITE_ERROR); the stream's failure() says why.
    return static_cast<detail::watch_stream*>(target)->feed({data, size * count}) ? size * count : 0;
  }

  void watch_once(const std::string& endpoint, const std::string& body,
                  const std::function<void(const std::vector<watch_event>&)>& on_events, std::stop_token stop,
                  bool& answered) {
    struct multi_deleter {
      void operator()(CURLM* multi) const noexcept { curl_multi_cleanup(multi); }
    };
    std::unique_ptr<CURLM, multi_deleter> multi(curl_multi_init());
    detail::easy_handle handle(curl_easy_init());
    if (!multi || !handle) throw error("etcd: libcurl could not make a handle");
    detail::header_list headers(curl_slist_append(nullptr, "Content-Type: application/json"));
    detail::watch_stream stream(on_events, answered);
    const std::string url = endpoint + "/v3/watch";
    CURL* h = handle.get();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, detail::curl_millis(opts_.request_timeout));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);  // a peer that vanished without a word
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 5L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 2L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &watch_bytes);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &stream);
    curl_multi_add_handle(multi.get(), h);
    struct detach {
      CURLM* multi;
      CURL* easy;
      ~detach() { curl_multi_remove_handle(multi, easy); }
    } const detached{multi.get(), h};
    // A stop wakes the poll below at once (curl_multi_wakeup may be called from any thread).
    const std::stop_callback wake(stop, [m = multi.get()] { curl_multi_wakeup(m); });
    int running = 1;
    while (!stop.stop_requested()) {
      if (const auto performed = curl_multi_perform(multi.get(), &running); performed != CURLM_OK)
        throw error(std::string("etcd: watch: ") + curl_multi_strerror(performed));
      if (running == 0) break;
      curl_multi_poll(multi.get(), nullptr, 0, 1000, nullptr);
    }
    if (stop.stop_requested()) return;
    int left = 0;
    CURLcode outcome = CURLE_OK;
    while (CURLMsg* message = curl_multi_info_read(multi.get(), &left)) {
      if (message->msg == CURLMSG_DONE) outcome = message->data.result;
    }
    if (!stream.failure().empty()) throw error(stream.failure());
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (outcome != CURLE_OK) throw error("etcd: watch " + url + ": " + curl_easy_strerror(outcome));
    if (status != 200) throw error("etcd: watch " + url + " answered HTTP " + std::to_string(status));
    throw error("etcd: watch " + url + " ended");
  }

  options opts_;
};

}  // namespace etcd
GEERPC_END_NAMESPACE
