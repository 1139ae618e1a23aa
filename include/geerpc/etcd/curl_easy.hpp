// geerpc: one libcurl transfer to etcd, set up the same way for a request and a watch: the URL and
// JSON body, the Authorization header when there is a token, TLS as options::tls says, and an
// error buffer that keeps libcurl's own words for failure.hpp. Also libcurl's start-up, once.
#pragma once

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
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

}  // namespace etcd::detail
GEERPC_END_NAMESPACE
