// Mutual TLS, and who may call what: a server that requires client certificates from its own CA
// and admits one client identity (a SPIFFE ID in the certificate's URI SAN) per method; a client,
// the teller, that calls the method it may and the one it may not, and prints what happens.
// Built with geerpc::tls (OpenSSL 3); docs/security.md, "Who is calling".
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <functional>
#include <geerpc/geerpc.hpp>
#include <geerpc/tls.hpp>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace std::chrono_literals;
using geerpc::tls::pem;

struct Bank {
  // A handler may read who calls, as the interceptor below does.
  long balance(const std::string& account, const geerpc::call_context& ctx) {
    std::cout << ("server: Bank.Balance called by " + ctx.identity().subject + " over " +
                  (ctx.encrypted() ? "TLS" : "plaintext") + "\n");
    return account == "alice" ? 1200 : 0;
  }
  long audit(const std::string&) { return 3; }  // accounts with odd entries
};
using BankApi =
    geerpc::service<"Bank", geerpc::method<"Balance", &Bank::balance>, geerpc::method<"Audit", &Bank::audit>>;

// A throwaway PKI, made in memory at start so that the example runs anywhere. A real deployment
// makes its certificates once (docs/security.md shows the openssl commands) and loads the files:
// pem::file("server.pem"), pem::file("server.key"), pem::file("clients-ca.pem").
namespace pki {

template <class T, void (*Free)(T*)>
struct deleter {
  void operator()(T* p) const noexcept { Free(p); }
};
using key_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using cert_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;
using bio_ptr = std::unique_ptr<BIO, deleter<BIO, BIO_free_all>>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("making the example's certificates: ") + what);
}

template <class Write>
std::string pem_text(Write write) {
  bio_ptr bio(BIO_new(BIO_s_mem()));
  check(bio != nullptr && write(bio.get()) == 1, "PEM");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

void extend(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  check(ext != nullptr && X509_add_ext(cert, ext, -1) == 1, "an extension");
  X509_EXTENSION_free(ext);
}

// A fresh P-256 key and its certificate, named `name`, valid for a day.
struct identity {
  key_ptr key{EVP_EC_gen("P-256")};
  cert_ptr cert{X509_new()};

  std::string certificate() const {
    return pem_text([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
  }
  std::string private_key() const {
    return pem_text(
        [&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  }
};

// A CA (`issuer` null: it signs itself), or a leaf `issuer` signs with the SANs `sans`
// ("DNS:localhost,IP:127.0.0.1", "URI:spiffe://...").
identity issue(const char* name, const identity* issuer, const char* sans = "") {
  identity made;
  check(made.key != nullptr && made.cert != nullptr, "a key");
  static long serial = 0;
  X509* cert = made.cert.get();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600L);
  X509_gmtime_adj(X509_getm_notAfter(cert), 24L * 3600);
  X509_set_pubkey(cert, made.key.get());
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(name), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer->cert.get() : cert;
  X509_set_issuer_name(cert, X509_get_subject_name(signer));
  extend(cert, signer, NID_basic_constraints, issuer != nullptr ? "critical,CA:FALSE" : "critical,CA:TRUE");
  if (issuer == nullptr) extend(cert, signer, NID_key_usage, "critical,keyCertSign");
  if (*sans != '\0') extend(cert, signer, NID_subject_alt_name, sans);
  check(X509_sign(cert, (issuer != nullptr ? issuer->key : made.key).get(), EVP_sha256()) > 0, "signing");
  return made;
}

}  // namespace pki

int main() {
  // One CA signs everything here; a real server names its clients' CA in client_ca.
  const pki::identity ca = pki::issue("example CA", nullptr);
  const pki::identity bank_id = pki::issue("bank", &ca, "DNS:localhost,IP:127.0.0.1");
  const pki::identity teller = pki::issue("teller", &ca, "URI:spiffe://example.org/teller");

  Bank bank;
  geerpc::server_options so;
  so.session = geerpc::tls::server({.certificate = pem::in_memory(bank_id.certificate()),
                                    .key = pem::in_memory(bank_id.private_key()),
                                    .clients = geerpc::tls::client_certificates::require,
                                    .client_ca = pem::in_memory(ca.certificate())});
  geerpc::server server(so);
  server.add<BankApi>(bank);
  // One identity per method: the certificate's SPIFFE ID, compared exactly.
  const std::map<std::string, std::string, std::less<>> admitted = {
      {"Bank.Balance", "spiffe://example.org/teller"},
      {"Bank.Audit", "spiffe://example.org/auditor"},
  };
  server.use(geerpc::allow_identities([&admitted](const geerpc::net::peer_identity& who, std::string_view method) {
    const auto it = admitted.find(method);
    return it != admitted.end() && who.has_uri(it->second);
  }));
  const std::string address = server.listen("127.0.0.1:0");
  std::cout << "bank listening on tls@" << address << ", requiring client certificates\n";

  geerpc::options o;
  o.session = geerpc::tls::client({.ca = pem::in_memory(ca.certificate()),
                                   .certificate = pem::in_memory(teller.certificate()),
                                   .key = pem::in_memory(teller.private_key())});
  o.timeouts.connect = 5s;
  auto client = geerpc::dial("tls@" + address, o);
  std::cout << "the teller (spiffe://example.org/teller) connected\n";

  auto balance = client.try_call<long>(geerpc::with_timeout(5s), "Bank.Balance", std::string("alice"));
  if (balance)
    std::cout << "Bank.Balance: admitted, alice has " << balance.value() << "\n";
  else
    std::cout << "Bank.Balance: " << balance.message() << "\n";

  auto audit = client.try_call<long>(geerpc::with_timeout(5s), "Bank.Audit", std::string("alice"));
  if (audit)
    std::cout << "Bank.Audit: admitted (it should not have been)\n";
  else
    std::cout << "Bank.Audit: refused, " << audit.code().message() << ": " << audit.message() << "\n";

  const bool as_expected = balance.has_value() && !audit && audit.code() == geerpc::errc::permission_denied;
  return as_expected ? 0 : 1;
}
