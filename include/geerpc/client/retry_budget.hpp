// geerpc: a balanced client's retry budget, gRPC's retry throttling: a token bucket that every
// attempt that fails in a way a retry could cure (busy, a broken connection) drains by one and every
// call that succeeds refills by a fraction; retries and hedges are allowed only while it is more than
// half full. Hedges are checked, not charged (as gRPC's): a slow replica that is hedged around all
// day must not leave the budget spent for the retries of every method. Under overload (every server
// answering busy) the retries stop after a few, so they never multiply the load.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "../config.hpp"

GEERPC_BEGIN_NAMESPACE

struct retry_budget_options {
  // Off: retries and hedges as many as there are servers to try, as before the budget.
  bool enabled = true;
  // The bucket's size, and what each success puts back (in thousandths, as gRPC's tokenRatio has
  // three decimals at most). With the defaults a client retries at most 4 failures in a row, and
  // needs 10 successes to earn each further retry once the bucket is at half.
  std::uint32_t max_tokens = 10;
  double token_ratio = 0.1;
};

namespace detail {

// Safe to use from several threads at once. Tokens are counted in thousandths.
class retry_budget {
 public:
  explicit retry_budget(const retry_budget_options& o)
      : enabled_(o.enabled && o.max_tokens > 0),
        max_(std::int64_t{o.max_tokens} * 1000),
        ratio_(o.token_ratio > 0 ? std::llround(std::min(o.token_ratio, 1000.0) * 1000) : 0),  // NaN: 0
        tokens_(max_) {}

  // A call succeeded. A full bucket (the common case) costs one relaxed load.
  void succeeded() noexcept {
    if (!enabled_ || tokens_.load(std::memory_order_relaxed) >= max_) return;
    const std::int64_t now = tokens_.fetch_add(ratio_, std::memory_order_relaxed) + ratio_;
    if (now > max_) tokens_.fetch_sub(std::min(now - max_, ratio_), std::memory_order_relaxed);
  }
  // An attempt failed in a way a retry could cure (busy, a broken connection): one token is taken;
  // whether a retry may follow.
  bool failed() noexcept {
    if (!enabled_) return true;
    std::int64_t before = tokens_.load(std::memory_order_relaxed);
    while (before > 0 && !tokens_.compare_exchange_weak(before, std::max<std::int64_t>(before - 1000, 0),
                                                        std::memory_order_relaxed)) {
    }
    return std::max<std::int64_t>(before - 1000, 0) > max_ / 2;
  }
  // Whether a hedge may be sent: the bucket is more than half full. It takes nothing: only the
  // attempts that fail do.
  bool allows_hedge() const noexcept { return !enabled_ || tokens_.load(std::memory_order_relaxed) > max_ / 2; }
  // The tokens left, in thousandths (tests, the docs' examples).
  std::int64_t tokens() const noexcept { return tokens_.load(std::memory_order_relaxed); }

 private:
  const bool enabled_;
  const std::int64_t max_;
  const std::int64_t ratio_;
  std::atomic<std::int64_t> tokens_;
};

}  // namespace detail
GEERPC_END_NAMESPACE
