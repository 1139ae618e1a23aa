// geerpc-call's calls: a dynamic call (json::raw_arguments in, json::raw_value out) and
// geerpc.Describe, whose JSON string result holds the document.
#include "caller.hpp"

#include <utility>

#ifdef GEERPC_CALL_HAVE_TLS
#include <geerpc/tls.hpp>
#endif

namespace geerpc_call {
namespace {

std::optional<failure> tls_session(const invocation& how, geerpc::options& opts) {
  if (!how.address.starts_with("tls@")) return std::nullopt;
#ifdef GEERPC_CALL_HAVE_TLS
  geerpc::tls::client_settings settings;
  if (!how.tls.ca_file.empty()) settings.ca = geerpc::tls::pem::file(how.tls.ca_file);
  if (!how.tls.certificate_file.empty()) {
    settings.certificate = geerpc::tls::pem::file(how.tls.certificate_file);
    settings.key = geerpc::tls::pem::file(how.tls.key_file);
  }
  settings.insecure_skip_verification = how.tls.insecure_skip_verify;
  try {
    opts.session = geerpc::tls::client(settings);
  } catch (const geerpc::tls::tls_error& e) {  // a file that cannot be read, a key that is not the certificate's
    return failure_of(geerpc::errc::invalid_argument, e.what());
  }
  return std::nullopt;
#else
  (void)opts;
  return failure_of(geerpc::errc::invalid_argument,
                    "this geerpc-call was built without TLS (geerpc::tls needs OpenSSL 3)");
#endif
}

}  // namespace

caller::caller(json_client client, const invocation& how)
    : client_(std::move(client)), timeout_(how.timeout), metadata_(how.metadata) {}

std::variant<caller, failure> caller::connect(const invocation& how) {
  geerpc::options opts;
  opts.timeouts.connect = how.connect_timeout;
  if (auto refused = tls_session(how, opts)) return *refused;
  auto client = geerpc::try_dial<geerpc::threaded, geerpc::json_codec>(how.address, opts);
  if (!client) return failure_of(client.error());
  return caller(std::move(client).value(), how);
}

geerpc::context caller::call_context() const {
  geerpc::context ctx = geerpc::with_timeout(timeout_);
  for (const auto& [key, value] : metadata_) ctx = ctx.with_metadata(key, value);
  return ctx;
}

std::variant<std::string, failure> caller::call(const std::string& method, const std::string& arguments_json) {
  auto reply =
      client_.try_call<geerpc::json::raw_value>(call_context(), method, geerpc::json::raw_arguments{arguments_json});
  if (!reply) return failure_of(reply.error());
  return std::move(reply).value().text;
}

std::variant<std::string, failure> caller::describe() {
  auto document = client_.try_call<std::string>(call_context(), "geerpc.Describe");
  if (!document) return failure_of(document.error());
  return std::move(document).value();
}

}  // namespace geerpc_call
