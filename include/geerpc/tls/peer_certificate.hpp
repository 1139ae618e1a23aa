// geerpc: what a finished TLS handshake proved about the peer, read out of OpenSSL once into the
// plain net::peer_identity (net/peer_identity.hpp) that the core hands on. session.hpp calls it
// when its handshake ends, with the session's lock held.
#pragma once

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <memory>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../net/peer_identity.hpp"

GEERPC_BEGIN_NAMESPACE
namespace tls {
namespace detail {

inline std::string string_of(const ASN1_STRING* text) {
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                     static_cast<std::size_t>(ASN1_STRING_length(text)));
}

// An iPAddress SAN's 4 or 16 bytes as text; anything else as its bytes in hex.
inline std::string address_text(const ASN1_OCTET_STRING* bytes) {
  const int size = ASN1_STRING_length(bytes);
  const unsigned char* data = ASN1_STRING_get0_data(bytes);
  char text[INET6_ADDRSTRLEN] = {};
  if ((size == 4 || size == 16) && ::inet_ntop(size == 4 ? AF_INET : AF_INET6, data, text, sizeof text) != nullptr)
    return text;
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < size; ++i) {
    hex += digits[data[i] >> 4];
    hex += digits[data[i] & 0xf];
  }
  return hex;
}

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
inline bool valid_utf8(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = lead < 0x80   ? 1
                               : lead < 0xc2 ? 0
                               : lead < 0xe0 ? 2
                               : lead < 0xf0 ? 3
                               : lead < 0xf5 ? 4
                                             : 0;
    if (length == 0 || i + length > text.size()) return false;
    unsigned long point = length == 1 ? lead : lead & (0xffu >> (length + 1));
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      point = (point << 6) | (next & 0x3fu);
    }
    if ((length == 3 && (point < 0x800 || (point >= 0xd800 && point <= 0xdfff))) ||
        (length == 4 && (point < 0x10000 || point > 0x10ffff)))
      return false;
    i += length;
  }
  return true;
}

// `name` in RFC 2253's form, printed by OpenSSL with `flags`; empty if it cannot.
inline std::string print_name(const X509_NAME* name, unsigned long flags) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (bio == nullptr || X509_NAME_print_ex(bio.get(), name, 0, flags) < 0) return {};
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

// The subject in RFC 2253's form, its UTF-8 kept as it is; a name whose bytes are not UTF-8 (a
// UTF8String holds what its issuer put there) with every byte outside ASCII escaped ("\C3\28")
// instead, which RFC 2253 allows too.
inline std::string subject_text(const X509* cert) {
  const X509_NAME* name = X509_get_subject_name(cert);
  std::string text = print_name(name, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  return valid_utf8(text) ? text : print_name(name, XN_FLAG_RFC2253);
}

inline void add_alternative_names(const X509* cert, net::peer_identity& identity) {
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names == nullptr) return;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    switch (name->type) {
      case GEN_DNS:
        identity.dns_names.push_back(string_of(name->d.dNSName));
        break;
      case GEN_IPADD:
        identity.ip_addresses.push_back(address_text(name->d.iPAddress));
        break;
      case GEN_URI:
        identity.uris.push_back(string_of(name->d.uniformResourceIdentifier));
        break;
      case GEN_EMAIL:
        identity.emails.push_back(string_of(name->d.rfc822Name));
        break;
      default:
        break;
    }
  }
  GENERAL_NAMES_free(names);
}

// What the finished handshake on `ssl` proved: encrypted; verified when the peer sent a
// certificate and this side checked it (SSL_VERIFY_PEER) and found it good; the names, then. Throws
// std::bad_alloc only.
inline net::peer_identity identity_of(const SSL* ssl) {
  net::peer_identity identity;
  identity.encrypted = true;
  const X509* cert = SSL_get0_peer_certificate(ssl);
  identity.verified =
      cert != nullptr && (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) != 0 && SSL_get_verify_result(ssl) == X509_V_OK;
  if (identity.verified) {
    identity.subject = subject_text(cert);
    add_alternative_names(cert, identity);
  }
  ERR_clear_error();
  return identity;
}

}  // namespace detail
}  // namespace tls
GEERPC_END_NAMESPACE
