// An etcd as a real network would run it, for the tests of the etcd client's TLS and auth: client
// URL on https (loopback), client certificates required (--client-cert-auth) against a CA made by
// the test (../tls/certificates.hpp, OpenSSL's API), simple auth tokens with a chosen TTL; and, on
// demand, etcd's v3 auth turned on through the gateway: root, and a user "app" whose role may read
// and write only the registry's prefix "/geerpc/".
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <geerpc/etcd.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "certificates.hpp"
#include "etcd_process.hpp"

namespace test {

inline const std::string app_user = "app";
inline const std::string app_password = "app-secret-password";
inline const std::string root_password = "root-secret-password";

// A POST as an administrator would send it (etcd's auth API is not the registry's): the answer.
inline nlohmann::json admin_post(const geerpc::etcd::options& opts, const std::string& path, const nlohmann::json& body,
                                 const std::string& token = {}) {
  const std::string text = body.dump();
  const std::string url = opts.endpoints.front() + path;
  geerpc::etcd::detail::easy_post request(opts, url, text, token);
  std::string answer;
  curl_easy_setopt(request.get(), CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(
      request.get(), CURLOPT_WRITEFUNCTION, +[](char* data, std::size_t size, std::size_t count, void* target) {
        static_cast<std::string*>(target)->append(data, size * count);
        return size * count;
      });
  curl_easy_setopt(request.get(), CURLOPT_WRITEDATA, &answer);
  if (curl_easy_perform(request.get()) != CURLE_OK) throw std::runtime_error(url + ": " + request.detail());
  auto reply = nlohmann::json::parse(answer, nullptr, false);
  long status = 0;
  curl_easy_getinfo(request.get(), CURLINFO_RESPONSE_CODE, &status);
  if (status != 200) throw std::runtime_error(url + " answered " + std::to_string(status) + ": " + answer);
  return reply;
}

class secure_etcd {
 public:
  explicit secure_etcd(std::chrono::seconds token_ttl = std::chrono::seconds{300})
      : server_(ca_.issue({.common_name = "etcd test server", .ips = {"127.0.0.1"}})),
        // No Common Name: etcd 3.4's gateway refuses a client certificate with one once auth is on.
        client_(ca_.issue({.common_name = "", .dns = {"geerpc-client.test"}})) {
    std::string pattern = (std::filesystem::temp_directory_path() / "geerpc-etcd-certs-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    write("ca.pem", ca_.certificate());
    write("server.pem", server_.certificate);
    write("server.key", server_.key);
    etcd_ = std::make_unique<etcd_process>(etcd_launch{
        .scheme = "https",
        .flags = {"--client-cert-auth", "--trusted-ca-file=" + (dir_ / "ca.pem").string(),
                  "--cert-file=" + (dir_ / "server.pem").string(), "--key-file=" + (dir_ / "server.key").string(),
                  "--auth-token=simple", "--auth-token-ttl=" + std::to_string(token_ttl.count())},
        .tls = tls()});
  }
  secure_etcd(const secure_etcd&) = delete;
  secure_etcd& operator=(const secure_etcd&) = delete;
  ~secure_etcd() {
    etcd_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  // What a client of this etcd is given: its CA and a client certificate, in memory.
  geerpc::etcd::tls_options tls() const {
    return {.ca = geerpc::etcd::pem::in_memory(ca_.certificate()),
            .certificate = geerpc::etcd::pem::in_memory(client_.certificate),
            .key = geerpc::etcd::pem::in_memory(client_.key)};
  }
  // Options for `user` (none: no authentication), generous in time for a loaded machine.
  geerpc::etcd::options options(const std::string& user = {}, const std::string& password = {}) const {
    auto opts = etcd_->options();
    opts.request_timeout = std::chrono::seconds(5);
    opts.user = user;
    opts.password = password;
    return opts;
  }
  geerpc::etcd::options app() const { return options(app_user, app_password); }
  const test::tls::authority& ca() const { return ca_; }
  const etcd_process& process() const { return *etcd_; }

  // root and app, app's role limited to /geerpc/, then auth enable.
  void enable_auth() const {
    const auto o = options();
    admin_post(o, "/v3/auth/user/add", {{"name", "root"}, {"password", root_password}});
    admin_post(o, "/v3/auth/user/grant", {{"user", "root"}, {"role", "root"}});
    admin_post(o, "/v3/auth/user/add", {{"name", app_user}, {"password", app_password}});
    admin_post(o, "/v3/auth/role/add", {{"name", "registry"}});
    admin_post(o, "/v3/auth/role/grant",
               {{"name", "registry"},
                {"perm",
                 {{"permType", "READWRITE"},
                  {"key", geerpc::detail::base64_encode("/geerpc/")},
                  {"range_end", geerpc::detail::base64_encode("/geerpc0")}}}});
    admin_post(o, "/v3/auth/user/grant", {{"user", app_user}, {"role", "registry"}});
    admin_post(o, "/v3/auth/enable", nlohmann::json::object());
  }

  // A token for `user`, as etcd gives one.
  std::string token(const std::string& user, const std::string& password) const {
    return admin_post(options(), "/v3/auth/authenticate", {{"name", user}, {"password", password}})["token"];
  }

  // Sets app's password again (to the same text): etcd revokes every token app holds.
  void revoke_app_tokens() const {
    admin_post(options(), "/v3/auth/user/changepw", {{"name", app_user}, {"password", app_password}},
               token("root", root_password));
  }

 private:
  void write(const std::string& name, const std::string& text) const {
    std::ofstream out(dir_ / name);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + name);
  }

  test::tls::authority ca_;
  test::tls::identity server_;
  test::tls::identity client_;
  std::filesystem::path dir_;
  std::unique_ptr<etcd_process> etcd_;
};

}  // namespace test
