// The debug page over HTTPS in headless Chromium, on the geerpc port of a server that requires
// TLS: Chromium offers h2 and http/1.1, the server agrees on http/1.1, and the page it renders
// shows the calls made. Chromium does not know the test's CA: the test pins the server's key
// instead (--ignore-certificate-errors-spki-list, base64 of the SHA-256 of its SubjectPublicKeyInfo),
// so a certificate Chromium could not check against that pin would show its error page, not this one.
// A screenshot is kept under <build>/artifacts/debug_page_https.png.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "tls_support.hpp"

namespace tls_https_browser {

using test::Args;

// What `command` printed on its standard output; throws if it failed.
std::string run(const std::string& command) {
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("failed (" + std::to_string(status) + "): " + command);
  return out;
}

// The pin Chromium takes: base64(SHA-256(DER SubjectPublicKeyInfo)) of the certificate in `pem`.
std::string spki_pin(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  REQUIRE(cert != nullptr);
  unsigned char* der = nullptr;
  const int size = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(cert.get()), &der);
  REQUIRE(size > 0);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned digest_size = 0;
  const bool hashed = EVP_Digest(der, static_cast<std::size_t>(size), digest, &digest_size, EVP_sha256(), nullptr) == 1;
  OPENSSL_free(der);
  REQUIRE(hashed);
  unsigned char text[4 * EVP_MAX_MD_SIZE / 3 + 4] = {};
  EVP_EncodeBlock(text, digest, static_cast<int>(digest_size));
  return reinterpret_cast<const char*>(text);
}

// Headless Chromium with a fresh profile (as Debian's runs as root), trusting the pinned key.
std::string chromium(const std::string& profile, const std::string& pin, const std::string& what) {
  return std::string("timeout 90 ") + GEERPC_TEST_CHROMIUM +
         " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
         " --disable-component-update --disable-sync --ignore-certificate-errors-spki-list=" +
         pin + " --user-data-dir=" + profile + " " + what + " 2>>" + profile + "/stderr";
}

// The text of the element with id `id` in Chromium's dump of the page.
std::string text_of(const std::string& dom, const std::string& id) {
  const std::string key = "id=\"" + id + "\">";
  const auto at = dom.find(key);
  if (at == std::string::npos) return "(no element " + id + ")";
  const auto from = at + key.size();
  return dom.substr(from, dom.find('<', from) - from);
}

TEST_CASE("the debug page over HTTPS in headless Chromium shows the calls made", "[tls][https][chromium]") {
  test::tls::pki pki;
  test::tls::tls_server<geerpc::threaded> s(pki.server_settings());
  auto client = test::tls::dial<geerpc::threaded>(s.address(), pki.client_settings());
  REQUIRE(client.has_value());
  for (int i = 0; i < 7; ++i)
    CHECK(client.value().call<int>(geerpc::with_timeout(test::tls::call_limit), "Arith.Sum", Args{i, 1}) == i + 1);

  test::temp_dir profile;
  const std::string pin = spki_pin(pki.server.certificate);
  const std::string url = "https://127.0.0.1:" + s.port() + "/debug/geerpc";
  const std::string dom = run(chromium(profile.path(), pin, "--dump-dom " + url));
  INFO(dom);
  REQUIRE(dom.find("<h1>geerpc debug</h1>") != std::string::npos);
  CHECK(text_of(dom, "Arith.Sum/calls") == "7");
  CHECK(text_of(dom, "Arith.Sum/successes") == "7");

  const std::filesystem::path artifacts = GEERPC_TEST_ARTIFACTS;
  std::filesystem::create_directories(artifacts);
  const auto shot = artifacts / "debug_page_https.png";
  std::filesystem::remove(shot);
  run(chromium(profile.path(), pin, "--window-size=1600,1200 --screenshot=" + shot.string() + " " + url));
  CHECK(std::filesystem::file_size(shot) > 10'000);
}

}  // namespace tls_https_browser
