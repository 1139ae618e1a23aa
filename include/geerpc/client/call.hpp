// geerpc: what both client transports share about one call: the request frame's patchable
// fields, the outcome, and GeeRPC's wording for client-side failures.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../context.hpp"
#include "../detail/byte_order.hpp"
#include "../detail/chrono.hpp"
#include "../error.hpp"
#include "../wire/frame.hpp"

GEERPC_BEGIN_NAMESPACE
namespace detail {

// How a call ended: status 0 with the reply body in the caller's buffer, or an error.
struct call_outcome {
  std::uint8_t status = 0;  // 0 or a geerpc::errc value
  std::string message;

  bool ok() const noexcept { return status == 0; }
  static call_outcome failure(errc code, std::string text) {
    return {static_cast<std::uint8_t>(code), std::move(text)};
  }
  geerpc::error to_error() const {
    // A status this client does not know (a newer server) is still the server's error.
    const auto code = status <= static_cast<std::uint8_t>(last_errc) ? static_cast<errc>(status) : errc::remote_error;
    return {make_error_code(code), message};
  }
};

// Where a successful reply's body goes: whoever completes the call hands it the body while the body
// is still in the receive buffer, before the call completes, so that a synchronous call decodes its
// reply where it arrived instead of first copying it out (a 4 KiB string reply was copied twice).
// A future keeps the bytes (into()) and decodes them when it is read.
class reply_sink {
 public:
  // Calls take(body) with the body; `take` must outlive the call.
  template <class Take>
  explicit reply_sink(Take& take) noexcept
      : target_(&take), take_([](void* t, std::span<const std::byte> body) { (*static_cast<Take*>(t))(body); }) {}

  static reply_sink into(std::vector<std::byte>& bytes) noexcept {
    return reply_sink(&bytes, [](void* t, std::span<const std::byte> body) {
      static_cast<std::vector<std::byte>*>(t)->assign(body.begin(), body.end());
    });
  }

  void operator()(std::span<const std::byte> body) const { take_(target_, body); }

 private:
  reply_sink(void* target, void (*take)(void*, std::span<const std::byte>)) noexcept : target_(target), take_(take) {}

  void* target_;
  void (*take_)(void*, std::span<const std::byte>);
};

// Called once when an asynchronous call completes, with its outcome, on the thread that completes
// it, before its future sees it ready (client interceptors' `after`; it must not throw).
using completion_hook = std::function<void(const call_outcome&)>;

inline call_outcome deadline_exceeded_outcome() {
  return call_outcome::failure(errc::deadline_exceeded, "rpc client: call failed: context deadline exceeded");
}
inline call_outcome canceled_outcome() {
  return call_outcome::failure(errc::canceled, "rpc client: call failed: context canceled");
}
inline call_outcome going_away_outcome() {
  return call_outcome::failure(errc::going_away, "rpc client: the server is shutting down: the call was not sent");
}
inline call_outcome connection_closed_outcome() {
  return call_outcome::failure(errc::connection_closed, "rpc client: connection is shut down");
}

// The outcome a response frame carries. The server answers deadline_exceeded only when the deadline
// the caller sent has passed: the same event as the caller's own timer, so it reads the same.
inline call_outcome response_outcome(std::uint8_t status, std::string_view text) {
  if (status == static_cast<std::uint8_t>(errc::deadline_exceeded)) return deadline_exceeded_outcome();
  return {status, std::string(text)};
}

// The remaining time of a deadline as the request header carries it: whole microseconds, rounded
// up so that a live deadline is never sent as 0 ("none").
inline std::uint64_t budget_us(const std::optional<std::chrono::steady_clock::time_point>& deadline,
                               std::chrono::steady_clock::time_point now) {
  if (!deadline) return 0;
  if (*deadline <= now) return 1;  // compared first: the difference overflows for time_point::min()
  const auto left = std::chrono::ceil<std::chrono::microseconds>(*deadline - now).count();
  return left < 1 ? 1 : static_cast<std::uint64_t>(left);
}

// Fills in the fields of a request frame that are known only when it is sent.
inline void stamp_request(std::span<std::byte> frame, std::uint64_t seq, std::uint64_t budget) noexcept {
  store_le<std::uint64_t>(frame.data() + wire::offset::seq, seq);
  store_le<std::uint64_t>(frame.data() + wire::offset::budget, budget);
}

inline std::array<std::byte, wire::frame_overhead> cancel_frame(std::uint64_t seq) {
  std::array<std::byte, wire::frame_overhead> frame{};
  store_le<std::uint32_t>(frame.data(), static_cast<std::uint32_t>(wire::header_size));
  frame[wire::offset::kind] = std::byte{static_cast<std::uint8_t>(wire::frame_kind::cancel)};
  store_le<std::uint64_t>(frame.data() + wire::offset::seq, seq);
  return frame;
}

}  // namespace detail
GEERPC_END_NAMESPACE
