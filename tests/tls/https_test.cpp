// HTTPS on the geerpc port: a client offering ALPN http/1.1 (a browser, curl) is let in, through
// the HTTP door only, and gets the debug page under the same policy as plaintext; a geerpc hello on
// such a connection is refused clearly; a client offering neither geerpc/1 nor http/1.1 is refused
// as before. libcurl fetches the page verifying the test's CA, when it is there.
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

#include "catch.hpp"
#include "tls_support.hpp"

#if GEERPC_TEST_HAVE_CURL
#include <curl/curl.h>
#endif

namespace tls_https_test {

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using test::Args;
using test::tls::call_limit;

// A TLS client made with OpenSSL that offers `alpn` (ALPN's wire form) and verifies nothing: the
// server is under test. Its reads give up after 10 s rather than hang.
class alpn_client {
 public:
  alpn_client(const std::string& address, std::string_view alpn)
      : peer_(address), ctx_(SSL_CTX_new(TLS_client_method())) {
    SSL_CTX_set_alpn_protos(ctx_.get(), reinterpret_cast<const unsigned char*>(alpn.data()),
                            static_cast<unsigned>(alpn.size()));
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl_.get(), peer_.fd());
    const timeval limit{10, 0};
    ::setsockopt(peer_.fd(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  }
  ~alpn_client() { ERR_clear_error(); }

  bool handshake() { return SSL_connect(ssl_.get()) == 1; }
  std::string selected() const {
    const unsigned char* name = nullptr;
    unsigned size = 0;
    SSL_get0_alpn_selected(ssl_.get(), &name, &size);
    return name != nullptr ? std::string(reinterpret_cast<const char*>(name), size) : std::string();
  }
  bool send(std::span<const std::byte> bytes) {
    std::size_t n = 0;
    return SSL_write_ex(ssl_.get(), bytes.data(), bytes.size(), &n) == 1 && n == bytes.size();
  }
  bool send(std::string_view text) { return send(std::as_bytes(std::span(text.data(), text.size()))); }
  // Everything until the server closes (or the read limit passes).
  std::string read_all() {
    std::string out;
    char buffer[4096];
    std::size_t n = 0;
    while (SSL_read_ex(ssl_.get(), buffer, sizeof buffer, &n) == 1) out.append(buffer, n);
    return out;
  }

 private:
  test::raw_peer peer_;
  std::unique_ptr<SSL_CTX, test::tls::ssl_ctx_deleter> ctx_;
  std::unique_ptr<SSL, test::tls::ssl_deleter> ssl_;
};

constexpr std::string_view browser_alpn{"\x02h2\x08http/1.1", 12};

TEMPLATE_TEST_CASE("a client offering h2 and http/1.1 gets http/1.1, and the debug page over HTTPS", "[tls][https]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  REQUIRE(test::tls::serves<TestType>(s.address(), pki.client_settings()));  // a call for the page to show

  alpn_client browser(s.server.address, browser_alpn);
  REQUIRE(browser.handshake());
  CHECK(browser.selected() == "http/1.1");
  REQUIRE(browser.send("GET /debug/geerpc/stats.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string answer = browser.read_all();
  CHECK_THAT(answer, StartsWith("HTTP/1.0 200 OK\r\n") && Contains("application/json") && Contains("Arith.Sum"));

  // A geerpc client still agrees on geerpc/1 on the same port.
  alpn_client both(s.server.address, std::string_view{"\x08http/1.1\x08geerpc/1", 18});
  REQUIRE(both.handshake());
  CHECK(both.selected() == "geerpc/1");
  CHECK(s.factory->failed_handshakes() == 0);
}

TEMPLATE_TEST_CASE("the debug page over HTTPS answers under the server's policy", "[tls][https]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  geerpc::server_options opts;
  opts.observability.debug_page = geerpc::debug_page_policy::off();
  test::tls::tls_server<TestType> s(pki.server_settings(), opts);
  alpn_client browser(s.server.address, browser_alpn);
  REQUIRE(browser.handshake());
  REQUIRE(browser.send("GET /debug/geerpc HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  CHECK_THAT(browser.read_all(), StartsWith("HTTP/1.0 404 Not Found\r\n"));
}

TEMPLATE_TEST_CASE("a geerpc hello on a connection that agreed on http/1.1 is refused", "[tls][https]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  alpn_client browser(s.server.address, std::string_view{"\x08http/1.1", 9});
  REQUIRE(browser.handshake());
  REQUIRE(browser.selected() == "http/1.1");
  std::array<std::byte, geerpc::wire::hello_size> hello{};
  geerpc::wire::encode_hello(
      {geerpc::wire::protocol_version, geerpc::binary_codec::id, 0, geerpc::wire::default_max_frame_size}, hello);
  REQUIRE(browser.send(hello));
  const std::string answer = browser.read_all();
  REQUIRE(answer.size() >= geerpc::wire::hello_reply_header_size);
  geerpc::wire::hello_reply reply;
  std::size_t reason_size = 0;
  std::array<std::byte, geerpc::wire::hello_reply_header_size> header{};
  std::memcpy(header.data(), answer.data(), header.size());
  REQUIRE(geerpc::wire::parse_hello_reply_header(header, reply, reason_size) == nullptr);
  CHECK_FALSE(reply.accepted);
  CHECK_THAT(answer.substr(geerpc::wire::hello_reply_header_size), Contains("agreed on HTTP (ALPN http/1.1)"));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

TEMPLATE_TEST_CASE("a client offering neither geerpc/1 nor http/1.1 is refused", "[tls][https]", GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  alpn_client h2_only(s.server.address, std::string_view{"\x02h2", 3});
  CHECK_FALSE(h2_only.handshake());
  CHECK(test::eventually([&] { return s.factory->failed_handshakes() == 1; }));
  CHECK_THAT(s.factory->last_failure(), Contains("no application protocol"));
  CHECK(test::tls::serves<TestType>(s.address(), pki.client_settings()));
}

#if GEERPC_TEST_HAVE_CURL

struct fetched {
  long status = 0;
  std::string body;
  std::string error;
};

std::size_t append(char* data, std::size_t, std::size_t size, void* out) {
  static_cast<std::string*>(out)->append(data, size);
  return size;
}

// `url` fetched with libcurl, trusting only the CA `ca` (PEM); curl offers h2 and http/1.1.
fetched curl_get(const std::string& url, const std::string& ca) {
  fetched out;
  CURL* curl = curl_easy_init();
  REQUIRE(curl != nullptr);
  curl_blob blob{const_cast<char*>(ca.data()), ca.size(), CURL_BLOB_COPY};
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &blob);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 20'000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  if (curl_easy_perform(curl) == CURLE_OK)
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.status);
  else
    out.error = error;
  curl_easy_cleanup(curl);
  return out;
}

TEMPLATE_TEST_CASE("curl opens the debug page over HTTPS, verifying the test CA", "[tls][https][curl]",
                   GEERPC_TRANSPORTS) {
  test::tls::pki pki;
  test::tls::tls_server<TestType> s(pki.server_settings());
  REQUIRE(test::tls::serves<TestType>(s.address(), pki.client_settings()));
  const std::string ca = pki.ca.certificate();
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    const fetched page = curl_get("https://" + host + ":" + s.port() + "/debug/geerpc", ca);
    INFO(page.error);
    CHECK(page.status == 200);
    CHECK_THAT(page.body, Contains("<h1>geerpc debug</h1>") && Contains("Arith.Sum"));
  }
  const fetched json = curl_get("https://127.0.0.1:" + s.port() + "/debug/geerpc/stats.json", ca);
  CHECK(json.status == 200);
  CHECK_THAT(json.body, StartsWith("{") && Contains("\"Arith.Sum\""));
  // Another CA: curl refuses the server, which counts a failed handshake.
  test::tls::authority other("another CA");
  CHECK_THAT(curl_get("https://127.0.0.1:" + s.port() + "/debug/geerpc", other.certificate()).error,
             Contains("certificate"));
  // Plaintext on the same port: the 400 that says to use HTTPS.
  const fetched plain = curl_get("http://127.0.0.1:" + s.port() + "/debug/geerpc", ca);
  CHECK(plain.status == 400);
  CHECK_THAT(plain.body, Contains("this port requires TLS: use https://127.0.0.1:" + s.port() + "/"));
}

#endif

}  // namespace tls_https_test
