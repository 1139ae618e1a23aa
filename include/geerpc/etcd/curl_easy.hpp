// geerpc: one libcurl transfer to etcd, set up the same way for a request and a watch: the URL and
// JSON body, the Authorization header when there is a token, TLS as options::tls says, and an
// error buffer that keeps libcurl's own words for failure.hpp; running it until it ends or a stop
// token fires. Also libcurl's start-up, once.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "../config.hpp"
#include "answers.hpp"
#include "options.hpp"

GEERPC_BEGIN_NAMESPACE
namespace etcd::detail {

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

// A PEM file or text for one of libcurl's option pairs (a path option and its _BLOB twin). The
// blob is copied by libcurl (CURL_BLOB_COPY), so `source` need not outlive the transfer.
inline void set_pem(CURL* handle, CURLoption path_option, CURLoption blob_option, const pem& source) {
  if (!source.text.empty()) {
    curl_blob blob{const_cast<char*>(source.text.data()), source.text.size(), CURL_BLOB_COPY};
    curl_easy_setopt(handle, blob_option, &blob);
  } else if (!source.path.empty()) {
    curl_easy_setopt(handle, path_option, source.path.c_str());
  }
}

inline void set_tls(CURL* handle, const tls_options& tls) {
  if (!tls.ca.empty()) {
    set_pem(handle, CURLOPT_CAINFO, CURLOPT_CAINFO_BLOB, tls.ca);
    curl_easy_setopt(handle, CURLOPT_CAPATH, nullptr);  // the given CAs instead of the system's, not beside
  }
  if (!tls.certificate.empty()) {
    curl_easy_setopt(handle, CURLOPT_SSLCERTTYPE, "PEM");
    set_pem(handle, CURLOPT_SSLCERT, CURLOPT_SSLCERT_BLOB, tls.certificate);
  }
  if (!tls.key.empty()) {
    curl_easy_setopt(handle, CURLOPT_SSLKEYTYPE, "PEM");
    set_pem(handle, CURLOPT_SSLKEY, CURLOPT_SSLKEY_BLOB, tls.key);
  }
  const bool verify = !tls.insecure_skip_verification;
  curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, verify ? 1L : 0L);
  curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, verify ? 2L : 0L);
}

// One POST of a JSON body to endpoint + path, its answer handed to the write callback the caller
// sets. The handle, its header list and its error buffer live together.
class easy_post {
 public:
  easy_post(const options& opts, const std::string& url, const std::string& body, const std::string& token)
      : handle_(curl_easy_init()), headers_(curl_slist_append(nullptr, "Content-Type: application/json")) {
    if (!handle_ || !headers_) throw error("etcd: libcurl could not make a handle");
    if (!token.empty()) {
      curl_slist* more = curl_slist_append(headers_.get(), ("Authorization: " + token).c_str());
      if (more == nullptr) throw error("etcd: libcurl could not make a header");
    }
    CURL* h = handle_.get();
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers_.get());
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());  // not copied: `body` outlives the transfer
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_.data());
    set_tls(h, opts.tls);
  }
  easy_post(const easy_post&) = delete;
  easy_post& operator=(const easy_post&) = delete;

  CURL* get() const noexcept { return handle_.get(); }
  // libcurl's words on the last failure ("SSL: no alternative certificate subject name matches
  // ..."), empty when it had none.
  std::string detail() const { return error_.data(); }
  // Whether the TLS handshake had completed (so a failure came after it: etcd refused something).
  bool handshake_done() const {
    curl_off_t micros = 0;
    return curl_easy_getinfo(handle_.get(), CURLINFO_APPCONNECT_TIME_T, &micros) == CURLE_OK && micros > 0;
  }

 private:
  easy_handle handle_;
  header_list headers_;
  std::array<char, CURL_ERROR_SIZE> error_{};
};

struct multi_deleter {
  void operator()(CURLM* multi) const noexcept { curl_multi_cleanup(multi); }
};
using multi_handle = std::unique_ptr<CURLM, multi_deleter>;

// Runs one transfer until it ends (its result) or `stop` fires (nothing: the transfer is dropped,
// its connection closed). Through libcurl's multi interface, not curl_easy_perform, which nothing
// can interrupt: a stop wakes curl_multi_poll at once through curl_multi_wakeup (libcurl 7.68+,
// callable from any thread), so a discovery or registration destroyed while etcd is silent returns
// within milliseconds instead of waiting for request_timeout. A progress callback
// (CURLOPT_XFERINFOFUNCTION) could abort a transfer too, but libcurl calls it only about once a
// second while the peer sends nothing, so a stop would wait up to that long.
inline std::optional<CURLcode> perform(CURL* easy, const std::stop_token& stop) {
  const multi_handle multi(curl_multi_init());
  if (!multi || curl_multi_add_handle(multi.get(), easy) != CURLM_OK)
    throw error("etcd: libcurl could not make a handle");
  struct detach {
    CURLM* multi;
    CURL* easy;
    ~detach() { curl_multi_remove_handle(multi, easy); }
  } const detached{multi.get(), easy};
  // Declared last: gone (and done running, if another thread was in it) before the handles are.
  const std::stop_callback wake(stop, [m = multi.get()] { curl_multi_wakeup(m); });
  while (!stop.stop_requested()) {
    int running = 0;
    if (const auto performed = curl_multi_perform(multi.get(), &running); performed != CURLM_OK)
      throw error(std::string("etcd: libcurl: ") + curl_multi_strerror(performed));
    if (running == 0) {
      int left = 0;
      std::optional<CURLcode> outcome;
      while (CURLMsg* message = curl_multi_info_read(multi.get(), &left)) {
        if (message->msg == CURLMSG_DONE) outcome = message->data.result;
      }
      // Ended without saying how: not taken for a success.
      if (!outcome) throw error("etcd: libcurl ended a transfer without its outcome");
      return outcome;
    }
    // Also returns when libcurl's own timeouts (CURLOPT_TIMEOUT_MS and the like) are due. A poll
    // that fails would fail again at once: thrown, not looped on.
    if (const auto polled = curl_multi_poll(multi.get(), nullptr, 0, 1000, nullptr); polled != CURLM_OK)
      throw error(std::string("etcd: libcurl: ") + curl_multi_strerror(polled));
  }
  return std::nullopt;
}

}  // namespace etcd::detail
GEERPC_END_NAMESPACE
