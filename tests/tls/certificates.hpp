// Certificates made by the tests themselves through OpenSSL's API: a CA, and leaves it signs with
// chosen subject alternative names (DNS, IP, URI, e-mail) and a chosen validity window. Each key is a fresh
// P-256 key (fast to make). Everything comes out as PEM text, for tls::pem::in_memory.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace test::tls {

using namespace std::chrono_literals;

struct key_deleter {
  void operator()(EVP_PKEY* key) const noexcept { EVP_PKEY_free(key); }
};
struct x509_deleter {
  void operator()(X509* x) const noexcept { X509_free(x); }
};

// One certificate and its key, in PEM.
struct identity {
  std::string certificate;
  std::string key;
};

// What a leaf is made for and when it is valid (offsets from now).
struct leaf_spec {
  std::string common_name = "geerpc test";
  std::vector<std::string> dns{};
  std::vector<std::string> ips{};
  std::chrono::seconds not_before = -1h;
  std::chrono::seconds not_after = 24h;
  std::vector<std::string> uris{};    // URI SANs ("spiffe://...")
  std::vector<std::string> emails{};  // e-mail SANs
  // The CN as a TeletexString of exactly these bytes (OpenSSL reads it as Latin-1), unchecked: for
  // names no CA should sign (control characters, quotes, bytes that are no UTF-8). The SANs are
  // always taken as their bytes.
  bool raw_common_name = false;
};

namespace detail {

inline void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificates: ") + what);
}

inline std::unique_ptr<EVP_PKEY, key_deleter> new_key() {
  std::unique_ptr<EVP_PKEY, key_deleter> key(EVP_EC_gen("P-256"));
  require(key != nullptr, "EVP_EC_gen");
  return key;
}

inline std::string pem_of(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return text;
}

inline std::string pem_of(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, static_cast<std::size_t>(size));
  BIO_free(bio);
  return text;
}

inline void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  require(ext != nullptr && X509_add_ext(cert, ext, -1) == 1, "an extension");
  X509_EXTENSION_free(ext);
}

// A certificate for `key`, named `name`, valid in [now + from, now + to], its serial fresh.
inline std::unique_ptr<X509, x509_deleter> new_certificate(EVP_PKEY* key, const std::string& name,
                                                           std::chrono::seconds from, std::chrono::seconds to,
                                                           bool raw_name = false) {
  static long serial = 1;
  std::unique_ptr<X509, x509_deleter> cert(X509_new());
  require(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), static_cast<long>(from.count()));
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(to.count()));
  X509_set_pubkey(cert.get(), key);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", raw_name ? V_ASN1_T61STRING : MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(name.data()), static_cast<int>(name.size()), -1, 0);
  return cert;
}

// The subject alternative names of `spec`, each IA5String holding its bytes as given (OpenSSL's
// text form of the extension could not carry a comma or a control character).
inline void add_alternative_names(X509* cert, const leaf_spec& spec) {
  GENERAL_NAMES* names = sk_GENERAL_NAME_new_null();
  require(names != nullptr, "a GENERAL_NAMES");
  auto add = [&](int type, const std::string& value) {
    GENERAL_NAME* name = GENERAL_NAME_new();
    ASN1_STRING* bytes = type == GEN_IPADD ? a2i_IPADDRESS(value.c_str()) : ASN1_IA5STRING_new();
    require(name != nullptr && bytes != nullptr, "a subject alternative name");
    if (type != GEN_IPADD) ASN1_STRING_set(bytes, value.data(), static_cast<int>(value.size()));
    GENERAL_NAME_set0_value(name, type, bytes);
    sk_GENERAL_NAME_push(names, name);
  };
  for (const std::string& dns : spec.dns) add(GEN_DNS, dns);
  for (const std::string& ip : spec.ips) add(GEN_IPADD, ip);
  for (const std::string& uri : spec.uris) add(GEN_URI, uri);
  for (const std::string& email : spec.emails) add(GEN_EMAIL, email);
  if (sk_GENERAL_NAME_num(names) > 0)
    require(X509_add1_ext_i2d(cert, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1, "the SAN extension");
  GENERAL_NAMES_free(names);
}

}  // namespace detail

// A certificate authority that signs leaves.
class authority {
 public:
  explicit authority(const std::string& name = "geerpc test CA") : key_(detail::new_key()) {
    cert_ = detail::new_certificate(key_.get(), name, -1h, 24h * 30);
    X509_set_issuer_name(cert_.get(), X509_get_subject_name(cert_.get()));
    detail::add_extension(cert_.get(), cert_.get(), NID_basic_constraints, "critical,CA:TRUE");
    detail::add_extension(cert_.get(), cert_.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    detail::add_extension(cert_.get(), cert_.get(), NID_subject_key_identifier, "hash");
    detail::require(X509_sign(cert_.get(), key_.get(), EVP_sha256()) > 0, "signing the CA");
  }

  std::string certificate() const { return detail::pem_of(cert_.get()); }

  identity issue(const leaf_spec& spec) const {
    auto key = detail::new_key();
    auto cert =
        detail::new_certificate(key.get(), spec.common_name, spec.not_before, spec.not_after, spec.raw_common_name);
    X509_set_issuer_name(cert.get(), X509_get_subject_name(cert_.get()));
    detail::add_extension(cert.get(), cert_.get(), NID_basic_constraints, "critical,CA:FALSE");
    detail::add_extension(cert.get(), cert_.get(), NID_ext_key_usage, "serverAuth,clientAuth");
    detail::add_alternative_names(cert.get(), spec);
    detail::require(X509_sign(cert.get(), key_.get(), EVP_sha256()) > 0, "signing a leaf");
    return {detail::pem_of(cert.get()), detail::pem_of(key.get())};
  }

 private:
  std::unique_ptr<EVP_PKEY, key_deleter> key_;
  std::unique_ptr<X509, x509_deleter> cert_;
};

}  // namespace test::tls
